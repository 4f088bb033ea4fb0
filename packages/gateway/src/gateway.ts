/**
 * `createGateway`: the long-lived Telegram side of one agent. It wires grammY (with the runner,
 * auto-retry and the per-chat budget) to the SQLite store, the protocol server the bridge connects to,
 * and the modules that own each concern: intake, turns, the card, prompts, pins, commands.
 *
 * Boot order matters and is fixed: open the store → identify the bot → register commands if they
 * changed → sweep pins (I4: before any traffic) → reconcile sends a crash left in flight (before anything
 * else may send: see `send-journal.ts`) → listen for the bridge → replay updates recorded but not
 * handled → re-send the inbox → re-attach unfinished turns → start polling.
 */
import { join } from 'node:path';
import { autoRetry } from '@grammyjs/auto-retry';
import { type RunnerHandle, run, sequentialize } from '@grammyjs/runner';
import {
  type AppFrame,
  assertNever,
  type BridgeToGateway,
  createProtocolServer,
  describeError,
  type Endpoint,
  type FrameOf,
  type GatewayToBridge,
  type Logger,
  type Route,
  silentLogger,
} from '@switchyard/protocol';
import { Bot, type Context } from 'grammy';
import type { Message, Update } from 'grammy/types';
import { createAccess, REFUSAL, updateOrigin } from './access.js';
import { saveAttachments } from './attachments.js';
import { type BotApi, errorText } from './bot-api.js';
import { type BudgetOptions, createBudget } from './budget.js';
import { type CardOptions, createCardDriver } from './card-driver.js';
import { COMMANDS, commandsFingerprint, createCommandRunner, parseCommand } from './commands.js';
import { createCourier } from './courier.js';
import { createUpdateSource, inboundIdOf, laneOf, unsupportedKind } from './intake.js';
import { createPins, type SweepReport } from './pins.js';
import { createPrompts } from './prompts.js';
import { createSendJournal, journaledApi } from './send-journal.js';
import { type GatewayStore, openGatewayStore } from './store.js';
import { createTurns } from './turns.js';

/** Everything the gateway needs; the cli maps the config file onto this. */
export interface GatewayOptions {
  /** The agent's name; the bridge must present the same one. */
  agent: string;
  /** The bot token. Never logged. */
  token: string;
  /** Bot API root; default `https://api.telegram.org`. The sandbox and tests point it at a local server. */
  apiRoot?: string;
  /** Telegram user ids allowed to use the agent. */
  allowUsers: readonly number[];
  /** When given, only these chats; otherwise any chat an allowed user writes from. */
  allowChats?: readonly number[];
  /** Directory for `gateway.sqlite` and `inbox/` (saved attachments). */
  stateDir: string;
  /** The Unix socket the bridge connects to. */
  socketPath: string;
  /** Progress-card timing (show delay, coalescing, heartbeat, zombie ceiling). */
  card?: CardOptions;
  /** Models `/model` accepts; empty accepts any name. Default: opus, sonnet, haiku. */
  models?: readonly string[];
  /** Restarts the bridge (systemd or the dev supervisor); `/restart` says so when absent. */
  restartBridge?: () => Promise<void>;
  logger?: Logger;
  /** Send pacing per chat; defaults stay under Telegram's limits. */
  budget?: BudgetOptions;
  /** Long-polling knobs; the defaults suit Telegram. */
  polling?: { timeoutSec?: number; stallGraceMs?: number; backoff?: { initialMs: number; maxMs: number } };
}

/** A snapshot for `/status` and operators. */
export interface GatewayStatus {
  bridgeConnected: boolean;
  agentState: string | undefined;
  model: string | undefined;
  mode: string | undefined;
  runningTurns: { turnId: string; route: Route }[];
  inbox: number;
  openPrompts: number;
  pins: number;
  lastError: string | undefined;
  polling: { ok: boolean; error?: string };
}

/** The gateway's handle. */
export interface Gateway {
  /** Boots (see the module comment); resolves once polling has started. */
  start(): Promise<void>;
  /** Stops polling, drains Telegram calls and renders in flight, closes the socket and the store. */
  stop(): Promise<void>;
  /** What `/status` shows. */
  status(): GatewayStatus;
  /** The boot sweep's result, once `start` resolved. */
  readonly sweep: SweepReport | undefined;
}

/** Creates the gateway; nothing happens until `start`. */
export function createGateway(options: GatewayOptions): Gateway {
  const logger = (options.logger ?? silentLogger).child({ component: 'gateway', agent: options.agent });
  const apiRoot = options.apiRoot ?? 'https://api.telegram.org';
  const models = options.models ?? ['opus', 'sonnet', 'haiku'];
  const allowed = createAccess({
    allowUsers: options.allowUsers,
    ...(options.allowChats ? { allowChats: options.allowChats } : {}),
  });

  const bot = new Bot(options.token, { client: { apiRoot } });
  const budget = createBudget(options.budget);
  // Inner transformer: sees every raw 429 (auto-retry, installed after it, is outermost and retries).
  bot.api.config.use(async (prev, method, payload, signal) => {
    const result = await prev(method, payload, signal);
    if (!result.ok && result.error_code === 429) {
      const chatId = (payload as { chat_id?: unknown }).chat_id;
      const retryAfter = result.parameters?.retry_after ?? 1;
      if (typeof chatId === 'number') budget.penalize(chatId, retryAfter, Date.now());
      logger.warn(
        { event: 'rate_limited', method, chat: chatId, retryAfter },
        'Telegram said 429; chat budget tightened',
      );
    }
    return result;
  });
  bot.api.config.use(
    autoRetry({
      maxRetryAttempts: 5,
      maxDelaySeconds: 120,
      rethrowHttpErrors: false,
      rethrowInternalServerErrors: false,
    }),
  );

  const courier = createCourier(budget);
  /** `bot.api` with every `sendMessage` journaled; set by `start` once the store is open. */
  let api: BotApi = bot.api;
  let store: GatewayStore | undefined;
  let endpoint: Endpoint | undefined;
  let runner: RunnerHandle | undefined;
  /** Aborted by `stop()`; a fresh one per `start()`. */
  let stopping = new AbortController();
  let sweep: SweepReport | undefined;
  let connected = false;
  let agentStatus: FrameOf<'status'> | undefined;
  let lastError: string | undefined;
  let polling: { ok: boolean; error?: string } = { ok: true };

  const db = (): GatewayStore => {
    if (!store) throw new Error('the gateway is not started: call start() first');
    return store;
  };
  const send = (frame: GatewayToBridge): Promise<void> => {
    if (!endpoint) throw new Error('the gateway is not started: call start() first');
    return endpoint.send(frame);
  };

  let turnsRef: ReturnType<typeof createTurns> | undefined;
  let promptsRef: ReturnType<typeof createPrompts> | undefined;
  let cardsRef: ReturnType<typeof createCardDriver> | undefined;

  const reply = (route: Route, text: string): Promise<unknown> =>
    courier
      .call(route.chatId, () =>
        api.sendMessage(
          route.chatId,
          text,
          route.threadId === undefined ? {} : { message_thread_id: route.threadId },
        ),
      )
      .catch((error: unknown) => logger.warn({ event: 'reply_failed', error: errorText(error) }));

  const routeOf = (message: Message): Route =>
    message.is_topic_message && message.message_thread_id !== undefined
      ? { chatId: message.chat.id, threadId: message.message_thread_id }
      : { chatId: message.chat.id };

  // ---------------------------------------------------------------------------------------------
  // Bridge frames

  const onFrame = (frame: AppFrame): void => {
    const f = frame as BridgeToGateway | GatewayToBridge;
    switch (f.type) {
      case 'turn_started':
      case 'turn_ended':
      case 'text_delta':
      case 'text':
      case 'thinking':
      case 'tool_started':
      case 'tool_finished':
      case 'subagent_started':
      case 'subagent_tool_started':
      case 'subagent_tool_finished':
      case 'subagent_text':
      case 'subagent_finished':
      case 'message_taken':
      case 'messages_unread':
        turnsRef?.frame(f);
        if (f.type === 'turn_ended' && f.outcome === 'error') lastError = f.error;
        return;
      case 'permission_request':
      case 'question':
      case 'prompt_closed':
        promptsRef?.frame(f);
        turnsRef?.frame(f);
        return;
      case 'status':
        agentStatus = f;
        commands.answer(f);
        return;
      case 'operator_event':
        lastError = f.message;
        logger.warn({ event: 'operator_event', kind: f.kind, turn: f.turnId }, 'agent reported a problem');
        if (f.route) void reply(f.route, `⚠️ ${f.message}`);
        return;
      case 'command_result':
        commands.answer(f);
        return;
      case 'user_message':
      case 'permission_answer':
      case 'question_answer':
      case 'interrupt':
      case 'set_model':
      case 'set_mode':
      case 'compact':
      case 'clear':
      case 'status_request':
        logger.warn({ event: 'unexpected_frame', type: f.type }, 'the bridge sent a gateway-to-bridge frame');
        return;
      default:
        assertNever(f);
    }
  };

  // ---------------------------------------------------------------------------------------------
  // Telegram updates

  const commands = createCommandRunner({
    agent: options.agent,
    models,
    reply: (route, text) => void reply(route, text),
    send,
    connected: () => connected,
    status: () => gateway.status(),
    listPins: () => db().listPins(),
    restartBridge: options.restartBridge,
    routes: {
      add: (commandId, route) => db().addCommandRoute(commandId, route),
      take: (commandId) => db().takeCommandRoute(commandId),
    },
    logger: logger.child({ component: 'commands' }),
  });

  const onMessage = async (ctx: Context, message: Message): Promise<void> => {
    const s = db();
    const route = routeOf(message);
    const updateId = ctx.update.update_id;
    const text = message.text ?? message.caption ?? '';
    const done = (): void => s.markHandled(updateId);

    if (message.text?.startsWith('/')) {
      const command = parseCommand(message.text, bot.botInfo.username, models);
      if (command) {
        done();
        await commands.run(command, route);
        return;
      }
    }
    const unsupported = unsupportedKind(message);
    if (unsupported) {
      done();
      await reply(route, `${unsupported} are not supported yet. Please send text, a photo or a document.`);
      return;
    }
    if (message.text && (await promptsRef?.typedAnswer(route, message.text))) {
      done();
      return;
    }
    const saved = await saveAttachments(message, {
      api: bot.api,
      fileUrl: (path) => `${apiRoot}/file/bot${options.token}/${path}`,
      inboxDir: join(options.stateDir, 'inbox'),
    });
    if (!saved.ok) {
      done();
      await reply(route, saved.reply);
      return;
    }
    if (text.length === 0 && saved.attachments.length === 0) {
      done();
      return;
    }
    const from = message.from;
    const replied = message.reply_to_message;
    const inboundId = inboundIdOf(message);
    const frame: FrameOf<'user_message'> = {
      type: 'user_message',
      inboundId,
      route,
      telegramMessageId: message.message_id,
      sender: {
        id: from?.id ?? 0,
        name: [from?.first_name, from?.last_name].filter(Boolean).join(' ').slice(0, 300) || 'unknown',
        ...(from?.username ? { username: from.username } : {}),
      },
      text,
      attachments: saved.attachments,
      ...(replied
        ? {
            replyTo: {
              messageId: replied.message_id,
              ...((replied.text ?? replied.caption)
                ? { text: (replied.text ?? replied.caption ?? '').slice(0, 4096) }
                : {}),
            },
          }
        : {}),
      sentAt: message.date * 1000,
    };
    // Durable first (inbox row + update handled, one transaction), then the placeholder, then the
    // frame. The frame's own transaction (the channel outbox) waits for the next turn of the event loop
    // so the placeholder request leaves first; the row is already in the inbox, and a row still
    // `queued` is re-sent at boot, so the delay cannot lose the message.
    s.addInbound({ inboundId, frame, updateId });
    const row = s.getInbound(inboundId);
    if (!row) return;
    void turnsRef?.placeholder(row);
    if (row.state === 'queued') setImmediate(() => void endpoint?.send(frame));
  };

  bot.use(async (ctx, next) => {
    const s = db();
    if (s.isHandled(ctx.update.update_id)) return;
    if (!allowed(ctx.update)) {
      s.markHandled(ctx.update.update_id);
      const { userId } = updateOrigin(ctx.update);
      if (ctx.callbackQuery) {
        await ctx.answerCallbackQuery({ text: REFUSAL }).catch(() => {});
      } else if (userId !== undefined && ctx.chat?.type === 'private' && s.recordRefusal(userId)) {
        void reply({ chatId: ctx.chat.id }, REFUSAL);
      }
      logger.info({ event: 'refused', user: userId }, 'update from a user not on the allowlist');
      return;
    }
    await next();
  });
  // Presses get a lane of their own per chat: they are ordered among themselves (a double press is
  // answered once) but never wait behind a message's handler (a download, a queued reply).
  bot.use(
    sequentialize((ctx: Context) => {
      const lane = laneOf(ctx.update);
      return ctx.callbackQuery && lane !== undefined ? `${lane}:press` : lane;
    }),
  );
  bot.on('callback_query', async (ctx) => {
    // Not awaited beyond the answer: a press never waits for the agent.
    await promptsRef?.press(ctx.callbackQuery);
    db().markHandled(ctx.update.update_id);
  });
  bot.on('message', (ctx) => onMessage(ctx, ctx.message));
  bot.use((ctx) => {
    db().markHandled(ctx.update.update_id);
  });
  bot.catch((error) => {
    lastError = errorText(error.error);
    logger.error(
      { event: 'handler_failed', update: error.ctx.update.update_id, error: errorText(error.error) },
      'update handler failed',
    );
  });

  const knownChats = (): number[] => [...new Set([...(options.allowChats ?? []), ...options.allowUsers])];

  const gateway: Gateway = {
    get sweep() {
      return sweep;
    },
    status() {
      const s = db();
      return {
        bridgeConnected: connected,
        agentState: agentStatus?.state,
        model: agentStatus?.model,
        mode: agentStatus?.mode,
        runningTurns: turnsRef?.live() ?? [],
        inbox: s.inboxLength(),
        openPrompts: promptsRef?.open() ?? 0,
        pins: s.listPins().length,
        lastError,
        polling,
      };
    },

    async start() {
      const s = openGatewayStore(join(options.stateDir, 'gateway.sqlite'));
      store = s;
      await initBot();
      await registerCommands(s);
      const pins = createPins({
        api: bot.api,
        store: s,
        courier,
        logger: logger.child({ component: 'pins' }),
      });
      sweep = await pins.sweep(knownChats(), bot.botInfo.id);
      const journal = createSendJournal({
        api: bot.api,
        store: s,
        courier,
        logger: logger.child({ component: 'sends' }),
      });
      const reconciled = await journal.reconcile();
      api = journaledApi(bot.api, journal);
      cardsRef = createCardDriver({
        api,
        courier,
        pins,
        logger: logger.child({ component: 'card' }),
        ...(options.card ? { card: options.card } : {}),
        onCardMessage: (turnId, messageId) => s.setTurnCard(turnId, messageId),
      });
      turnsRef = createTurns({
        api,
        journal,
        courier,
        store: s,
        cards: cardsRef,
        logger: logger.child({ component: 'turns' }),
        bridgeConnected: () => connected,
      });
      promptsRef = createPrompts({
        api,
        journal,
        courier,
        store: s,
        logger: logger.child({ component: 'prompts' }),
        send,
      });
      endpoint = createProtocolServer({
        socketPath: options.socketPath,
        agent: options.agent,
        store: s.channel,
        onFrame,
        onConnectionChange: (state) => {
          connected = state.connected;
          logger.info(
            { event: 'bridge_connection', connected: state.connected },
            state.connected ? 'bridge connected' : 'bridge disconnected',
          );
        },
        logger: logger.child({ component: 'protocol' }),
      });
      await endpoint.start();

      // Updates recorded before a crash but never handled: handle them now, in order, before polling.
      for (const u of s.unhandledUpdates()) {
        if (u.payload === undefined) s.markHandled(u.updateId);
        else await bot.handleUpdate(u.payload as Update);
      }
      for (const row of s.queuedInbound()) void send(row.frame);
      turnsRef.resume();

      stopping = new AbortController();
      const getUpdates = createUpdateSource({
        api: bot.api,
        store: s,
        keep: allowed,
        logger: logger.child({ component: 'intake' }),
        onHealth: (health) => {
          polling = health;
        },
        ...(options.polling?.timeoutSec !== undefined ? { pollTimeoutSec: options.polling.timeoutSec } : {}),
        ...(options.polling?.stallGraceMs !== undefined
          ? { stallGraceMs: options.polling.stallGraceMs }
          : {}),
        ...(options.polling?.backoff ? { backoff: options.polling.backoff } : {}),
        signal: stopping.signal,
      });
      runner = run(
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
    },

    async stop() {
      // Abort the long poll at once rather than wait out its timeout (up to 30 s); see intake.ts.
      const polled = runner?.stop();
      stopping.abort();
      await polled;
      runner = undefined;
      cardsRef?.stop();
      commands.stop();
      await turnsRef?.stop();
      await courier.drain();
      await endpoint?.stop();
      endpoint = undefined;
      store?.close();
      store = undefined;
      logger.info({ event: 'stopped' }, 'gateway stopped');
    },
  };

  async function initBot(): Promise<void> {
    for (let delay = 1000; ; delay = Math.min(delay * 2, 60_000)) {
      try {
        await bot.init();
        return;
      } catch (error) {
        logger.error(
          { event: 'get_me_failed', error: errorText(error), retryInMs: delay },
          'cannot reach Telegram (getMe); check the token and the network',
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async function registerCommands(s: GatewayStore): Promise<void> {
    const fingerprint = commandsFingerprint();
    if (s.getMeta('commands') === fingerprint) return;
    try {
      await bot.api.setMyCommands(COMMANDS.map((c) => ({ ...c })));
      s.setMeta('commands', fingerprint);
      logger.info({ event: 'commands_registered' }, 'bot commands registered');
    } catch (error) {
      logger.warn(
        { event: 'commands_failed', error: errorText(error) },
        'setMyCommands failed; will retry next start',
      );
    }
  }

  return gateway;
}
