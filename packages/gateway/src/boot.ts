/**
 * The gateway's boot sequence, from an open store to polling. The order is fixed and each step says
 * why it comes where it does:
 *
 * identify the bot (`getMe`, retried until Telegram answers) → register commands if they changed →
 * sweep pins (I4: before any traffic) → reconcile sends a crash left in flight (before anything else
 * may send: see `send-journal.ts`) → create the renderers and the bridge's endpoint and hand them to
 * the gateway ({@link BootOptions.ready}) → listen for the bridge → replay updates recorded but not
 * handled → re-send the inbox → re-attach unfinished turns → start polling.
 */
import { type RunnerHandle, run } from '@grammyjs/runner';
import {
  type AppFrame,
  type Clock,
  createProtocolServer,
  describeError,
  type Endpoint,
  type GatewayToBridge,
  type Logger,
  systemClock,
} from '@switchyard/protocol';
import type { Bot } from 'grammy';
import type { Update } from 'grammy/types';
import { type BotApi, errorText } from './bot-api.js';
import { type CardDriver, createCardDriver } from './card-driver.js';
import { registerCommands } from './commands.js';
import { threadParams } from './core/route.js';
import type { Courier } from './courier.js';
import { createUpdateSource } from './intake.js';
import { reportNotForwarded } from './message-fit.js';
import type { GatewayOptions } from './options.js';
import { createPins, type SweepReport } from './pins.js';
import { createPrompts, type Prompts } from './prompts.js';
import { createSendJournal, journaledApi } from './send-journal.js';
import type { GatewayStore } from './store.js';
import { createTurns, type Turns, type TurnsOptions } from './turns.js';

/** What renders the agent's work into Telegram once booted; `api` journals every `sendMessage`. */
export interface Renderers {
  api: BotApi;
  cards: CardDriver;
  turns: Turns;
  prompts: Prompts;
}

/** What the boot sequence needs; the gateway owns all of it. */
export interface BootOptions {
  bot: Bot;
  store: GatewayStore;
  courier: Courier;
  config: Pick<
    GatewayOptions,
    | 'agent'
    | 'socketPath'
    | 'socketMode'
    | 'socketDirectoryMode'
    | 'card'
    | 'polling'
    | 'replies'
    | 'placeholderRetryMs'
    | 'bridgeGraceMs'
    | 'clock'
  >;
  /** Chats whose stray pins the sweep checks. */
  knownChats: number[];
  /** The allowlist: whose updates' content intake may keep. */
  keep(update: Update): boolean;
  /** Sends a frame to the bridge through the endpoint handed to `ready`. */
  send(frame: GatewayToBridge): Promise<void>;
  onFrame(frame: AppFrame): void;
  /** The bridge's connection, as the turns read it (see `core/arrival.ts`). */
  bridge: TurnsOptions['bridge'];
  onConnectionChange(connected: boolean): void;
  onPollingHealth(health: { ok: boolean; error?: string }): void;
  /**
   * Called once the renderers and the endpoint exist, before the bridge can connect and before any
   * update is handled: from then on frames and updates reach them through the gateway.
   */
  ready(renderers: Renderers, endpoint: Endpoint): void;
  /** Aborted by the gateway's stop: ends the long poll in flight. */
  signal: AbortSignal;
  logger: Logger;
}

/** What a finished boot leaves running, and what it found. */
export interface Booted {
  runner: RunnerHandle;
  sweep: SweepReport;
}

/** Runs the boot sequence (see the module comment); resolves once polling has started. */
export async function boot(options: BootOptions): Promise<Booted> {
  const { bot, store, courier, config, logger } = options;
  const clock = config.clock ?? systemClock;
  await initBot(bot, clock, logger);
  await registerCommands(bot.api, store, logger);
  const pins = createPins({
    api: bot.api,
    store,
    courier,
    clock,
    logger: logger.child({ component: 'pins' }),
  });
  const sweep = await pins.sweep(options.knownChats, bot.botInfo.id);
  const journal = createSendJournal({
    api: bot.api,
    store,
    courier,
    clock,
    logger: logger.child({ component: 'sends' }),
  });
  const reconciled = await journal.reconcile();
  const api = journaledApi(bot.api, journal);
  const cards = createCardDriver({
    api,
    journal,
    courier,
    pins,
    clock,
    logger: logger.child({ component: 'card' }),
    ...(config.card ? { card: config.card } : {}),
    onCardMessage: (turnId, messageId) => store.setTurnCard(turnId, messageId),
  });
  const turns = createTurns({
    api,
    journal,
    courier,
    store,
    cards,
    logger: logger.child({ component: 'turns' }),
    bridge: options.bridge,
    ...(config.bridgeGraceMs !== undefined ? { bridgeGraceMs: config.bridgeGraceMs } : {}),
    ...(config.replies ? { replies: config.replies } : {}),
    ...(config.clock ? { clock: config.clock } : {}),
    ...(config.placeholderRetryMs !== undefined ? { placeholderRetryMs: config.placeholderRetryMs } : {}),
  });
  const prompts = createPrompts({
    api,
    journal,
    courier,
    store,
    logger: logger.child({ component: 'prompts' }),
    send: options.send,
  });
  const endpoint = createProtocolServer({
    socketPath: config.socketPath,
    ...(config.socketMode !== undefined ? { socketMode: config.socketMode } : {}),
    ...(config.socketDirectoryMode !== undefined ? { directoryMode: config.socketDirectoryMode } : {}),
    agent: config.agent,
    store: store.channel,
    onFrame: options.onFrame,
    onConnectionChange: (state) => {
      options.onConnectionChange(state.connected);
      turns.connection(state.connected);
      logger.info(
        { event: 'bridge_connection', connected: state.connected },
        state.connected ? 'bridge connected' : 'bridge disconnected',
      );
    },
    logger: logger.child({ component: 'protocol' }),
    onRefused: (r) => {
      logger.warn(
        { event: 'frame_skipped', direction: r.direction, seq: r.seq, type: r.frameType, code: r.code },
        'the channel skipped a frame its receiver refused',
      );
      // A user's message the bridge refused is not silently gone: its placeholder says so.
      if (r.direction === 'sent' && r.frame?.type === 'user_message') {
        turns.frame({
          type: 'messages_unread',
          inboundIds: [r.frame.inboundId],
          reason: `the agent could not take it: ${r.message.slice(0, 300)}`,
        });
      }
    },
  });
  options.ready({ api, cards, turns, prompts }, endpoint);
  await endpoint.start();

  // Updates recorded before a crash but never handled: handle them now, in order, before polling.
  for (const u of store.unhandledUpdates()) {
    if (u.payload === undefined) store.markHandled(u.updateId);
    else await bot.handleUpdate(u.payload as Update);
  }
  // A row whose frame the channel refuses (stored before intake cut fields to the limits) is marked
  // unread and its sender told, instead of being offered again at every boot.
  for (const row of store.queuedInbound()) {
    void options.send(row.frame).catch((error: unknown) => {
      logger.error({ event: 'forward_refused', error: String(error) }, 'queued message not passed on');
      reportNotForwarded(row.frame, error, {
        turns,
        hasPlaceholder: (id) => store.getInbound(id)?.placeholderId !== undefined,
        reply: (route, text) =>
          void courier
            .call(route.chatId, () => api.sendMessage(route.chatId, text, threadParams(route)))
            .catch(() => {}),
      });
    });
  }
  turns.resume();

  const polling = config.polling;
  const getUpdates = createUpdateSource({
    api: bot.api,
    store,
    keep: options.keep,
    botUsername: bot.botInfo.username,
    logger: logger.child({ component: 'intake' }),
    onHealth: options.onPollingHealth,
    ...(polling?.timeoutSec !== undefined ? { pollTimeoutSec: polling.timeoutSec } : {}),
    ...(polling?.stallGraceMs !== undefined ? { stallGraceMs: polling.stallGraceMs } : {}),
    ...(polling?.backoff ? { backoff: polling.backoff } : {}),
    signal: options.signal,
    clock,
  });
  const runner = run(
    {
      handleUpdate: (update: Update) => bot.handleUpdate(update),
      errorHandler: (error: unknown) => {
        logger.error({ event: 'runner_error', error: describeError(error) });
      },
      // The runner's signal is the abort-controller shim's; the source turns it into a native one.
      api: { getUpdates },
    },
    { runner: { silent: true } },
  );
  logger.info({ event: 'started', sweep, reconciled }, 'gateway started');
  return { runner, sweep };
}

/** `bot.init()` (getMe), retried with capped backoff: the gateway cannot do anything without it. */
async function initBot(bot: Bot, clock: Clock, logger: Logger): Promise<void> {
  for (let delay = 1000; ; delay = Math.min(delay * 2, 60_000)) {
    try {
      await bot.init();
      return;
    } catch (error) {
      logger.error(
        { event: 'get_me_failed', error: errorText(error), retryInMs: delay },
        'cannot reach Telegram (getMe); check the token and the network',
      );
      await clock.sleep(delay);
    }
  }
}
