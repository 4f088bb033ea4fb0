/**
 * `createGateway`: the long-lived Telegram side of one agent, and the shell that owns its state. It
 * builds grammY's `Bot` (`bot-api.ts`: the per-chat budget, auto-retry), the courier and the command
 * runner, installs the Telegram handlers (`telegram-handlers.ts`) and routes bridge frames
 * (`bridge-frames.ts`); `start` opens the store and runs the boot sequence (`boot.ts`, where its fixed
 * order is explained), `stop` takes everything down in reverse.
 *
 * Ownership: the store, the renderers and the endpoint live here from `start` to `stop`; every other
 * module reaches them through the narrow getters this shell hands it.
 */
import { join } from 'node:path';
import type { RunnerHandle } from '@grammyjs/runner';
import {
  conversationKey,
  type Endpoint,
  type FrameOf,
  type GatewayToBridge,
  lockStateDir,
  prepareExchange,
  type Route,
  type StateLock,
  silentLogger,
  systemClock,
} from '@switchyard/protocol';
import { createAccess } from './access.js';
import { type AlertKind, type Alerts, createAlerts } from './alerts.js';
import { boot, type Renderers } from './boot.js';
import { createBot, errorText } from './bot-api.js';
import { createFrameDispatch } from './bridge-frames.js';
import { createBudget } from './budget.js';
import { createCommandRunner } from './commands.js';
import type { InlineButton } from './core/command-texts.js';
import { threadParams } from './core/route.js';
import { createCourier } from './courier.js';
import { createFileSender } from './files.js';
import { createKnownChats } from './known-chats.js';
import { createLastErrors } from './last-errors.js';
import { reportNotForwarded } from './message-fit.js';
import { noMetrics } from './metrics.js';
import type { GatewayOptions, GatewayStatus } from './options.js';
import type { SweepReport } from './pins.js';
import { createRetention, type Retention } from './retention.js';
import { type GatewayStore, openGatewayStore } from './store.js';
import { handlerFailed, type TelegramHandlerOptions, telegramHandlers } from './telegram-handlers.js';

/** The bridge's operator events an operator is alerted to, as alert kinds. */
const ALERTED_EVENTS: Partial<Record<FrameOf<'operator_event'>['kind'], AlertKind>> = {
  crash_loop: 'crash_loop',
  auth: 'auth',
  stuck: 'stuck',
};

/** The gateway's handle. */
export interface Gateway {
  /** Boots (see `boot.ts`); resolves once polling has started. */
  start(): Promise<void>;
  /** Stops polling, drains Telegram calls and renders in flight, closes the socket and the store. */
  stop(): Promise<void>;
  /** What `/status` shows: the agent's, or one conversation's (`route`). */
  status(route?: Route): GatewayStatus;
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
  const clock = options.clock ?? systemClock;
  const budget = createBudget(options.budget);
  const metrics = options.metrics ?? noMetrics;
  // Set once `reply` exists (below); alerts only go out after `start`.
  let alerts: Alerts | undefined;
  const bot = createBot({
    token: options.token,
    apiRoot,
    budget,
    clock,
    logger,
    onResult: (method, result) => {
      metrics.telegramCall(method, result);
      if (!result.ok && result.error_code === 429) alerts?.tooManyRequests();
    },
  });
  const courier = createCourier(budget, clock);

  let store: GatewayStore | undefined;
  /** Held from the first thing `start()` does to the last thing `stop()` does. */
  let lock: StateLock | undefined;
  let retention: Retention | undefined;
  const exchange = options.exchange ?? { dir: join(options.stateDir, 'files') };
  /** Set by the boot sequence before the bridge can connect; `api` journals every `sendMessage`. */
  let renderers: Renderers | undefined;
  let endpoint: Endpoint | undefined;
  let runner: RunnerHandle | undefined;
  /** Aborted by `stop()`; a fresh one per `start()`. */
  let stopping = new AbortController();
  let sweep: SweepReport | undefined;
  let connected = false;
  /** The latest `status` of each conversation (by `conversationKey`), and of the agent as a whole. */
  const conversationStatus = new Map<string, FrameOf<'status'>>();
  let agentStatus: FrameOf<'status'> | undefined;
  const listenAll = new Set(options.listenAllChats ?? []);
  const allowUsers = new Set(options.allowUsers);
  const lastErrors = createLastErrors();
  let polling: { ok: boolean; error?: string } = { ok: true };

  const db = (): GatewayStore => {
    if (!store) throw new Error('the gateway is not started: call start() first');
    return store;
  };
  const send = (frame: GatewayToBridge): Promise<void> => {
    if (!endpoint) throw new Error('the gateway is not started: call start() first');
    return endpoint.send(frame);
  };
  const reply = (route: Route, text: string): Promise<unknown> =>
    courier
      .call(route.chatId, () =>
        (renderers?.api ?? bot.api).sendMessage(route.chatId, text, threadParams(route)),
      )
      .catch((error: unknown) => logger.warn({ event: 'reply_failed', error: errorText(error) }));
  const replyWithButtons = (route: Route, text: string, buttons: InlineButton[][]): Promise<unknown> =>
    courier
      .call(route.chatId, () =>
        (renderers?.api ?? bot.api).sendMessage(route.chatId, text, {
          ...threadParams(route),
          reply_markup: { inline_keyboard: buttons },
        }),
      )
      .catch((error: unknown) => logger.warn({ event: 'reply_failed', error: errorText(error) }));
  const setLastError = (message: string | undefined, route?: Route): void => lastErrors.note(message, route);
  alerts = createAlerts({
    agent: options.agent,
    chat: options.alertChat,
    send: (route, text) => void reply(route, text),
    stateDir: options.stateDir,
    clock,
    logger: logger.child({ component: 'alerts' }),
  });

  const commands = createCommandRunner({
    agent: options.agent,
    models,
    allowedModes: options.allowedModes,
    reply: (route, text) => void reply(route, text),
    replyWithButtons: (route, text, buttons) => void replyWithButtons(route, text, buttons),
    send,
    connected: () => connected,
    status: (route) => gateway.status(route),
    listPins: () => db().listPins(),
    operators: options.operators ?? [],
    restartBridge: options.restartBridge,
    simulatedModel: options.simulatedModel === true,
    routes: {
      add: (commandId, route) => db().addCommandRoute(commandId, route),
      take: (commandId) => db().takeCommandRoute(commandId),
    },
    atomically: (fn) => db().atomically(fn),
    clock,
    logger: logger.child({ component: 'commands' }),
  });
  const files = createFileSender({ api: bot.api, store: db, courier, send, exchange, clock, logger });
  const knownChats = createKnownChats(db, [...options.allowUsers, ...(options.allowChats ?? [])]);
  const onFrame = createFrameDispatch({
    live: () => renderers,
    commands,
    files,
    reply: (route, text) => void reply(route, text),
    onAgentStatus: (status) => {
      agentStatus = status;
      if (status.route) conversationStatus.set(conversationKey(status.route), status);
    },
    allows: (route) => knownChats.allows(route),
    onOperatorEvent: (event) => {
      // An event of no conversation is the operator's to hear, never another chat's `/status`.
      const kind = ALERTED_EVENTS[event.kind] ?? (event.route ? undefined : 'agent_error');
      if (kind) alerts?.raise(kind, event.message);
    },
    setLastError,
    logger,
  });
  const handlerOptions: TelegramHandlerOptions = {
    store: db,
    live: () => renderers,
    forward: (frame) =>
      void endpoint?.send(frame).catch((error: unknown) => {
        logger.error({ event: 'forward_refused', error: String(error) }, 'message not queued');
        reportNotForwarded(frame, error, {
          turns: renderers?.turns,
          hasPlaceholder: (id) => db().getInbound(id)?.placeholderId !== undefined,
          reply: (route, text) => void reply(route, text),
        });
      }),
    allowed,
    allowedUser: (userId) => allowUsers.has(userId),
    noteChat: (chatId) => knownChats.note(chatId),
    listensToAll: (chatId) => listenAll.has(chatId),
    reply,
    commands,
    models,
    attachments: {
      api: bot.api,
      fileUrl: (path) => `${apiRoot}/file/bot${options.token}/${path}`,
      exchange,
      clock,
    },
    setLastError,
    clock,
    me: () => bot.botInfo,
    logger,
  };
  bot.use(telegramHandlers(handlerOptions));
  bot.catch(handlerFailed(handlerOptions));

  const gateway: Gateway = {
    get sweep() {
      return sweep;
    },
    status(route) {
      const s = db();
      const key = route ? conversationKey(route) : undefined;
      const own = key !== undefined ? conversationStatus.get(key) : agentStatus;
      const turns = renderers?.turns.live() ?? [];
      return {
        bridgeConnected: connected,
        agentState: own?.state,
        model: own?.model,
        mode: own?.mode,
        runningTurns: key === undefined ? turns : turns.filter((t) => conversationKey(t.route) === key),
        inbox: s.inboxLength(),
        openPrompts: renderers?.prompts.open() ?? 0,
        pins: s.listPins().length,
        lastError: lastErrors.of(route),
        polling,
      };
    },

    async start() {
      const taken = lockStateDir(options.stateDir, 'gateway');
      if (!taken.ok) throw new Error(taken.message);
      lock = taken.lock;
      prepareExchange(exchange);
      const s = openGatewayStore(join(options.stateDir, 'gateway.sqlite'), clock);
      store = s;
      alerts?.start();
      retention = createRetention({
        store: s,
        dirs: [exchange.dir],
        ...(options.retentionDays !== undefined ? { days: options.retentionDays } : {}),
        clock,
        logger: logger.child({ component: 'retention' }),
      });
      await retention.start();
      metrics.queueLength(() => store?.inboxLength() ?? 0);
      stopping = new AbortController();
      const booted = await boot({
        bot,
        store: s,
        courier,
        config: options,
        knownChats: [...new Set([...(options.allowChats ?? []), ...options.allowUsers])],
        keep: allowed,
        send,
        onFrame: metrics.observeFrames(onFrame),
        bridge: { connected: () => connected },
        onConnectionChange: (state) => {
          connected = state;
          metrics.bridgeConnected(state);
        },
        onPollingHealth: (health) => {
          polling = health;
          if (health.error?.startsWith('conflict')) alerts?.raise('conflict', health.error);
        },
        ready: (r, e) => {
          renderers = r;
          endpoint = e;
        },
        signal: stopping.signal,
        logger,
      });
      runner = booted.runner;
      sweep = booted.sweep;
      files.resume();
    },

    async stop() {
      // Abort the long poll at once rather than wait out its timeout (up to 30 s); see intake.ts.
      const polled = runner?.stop();
      stopping.abort();
      await polled;
      runner = undefined;
      alerts?.stop();
      renderers?.cards.stop();
      commands.stop();
      await renderers?.turns.stop();
      await files.stop();
      await courier.drain();
      await endpoint?.stop();
      endpoint = undefined;
      await retention?.stop();
      retention = undefined;
      store?.close();
      store = undefined;
      lock?.release();
      lock = undefined;
      logger.info({ event: 'stopped' }, 'gateway stopped');
    },
  };
  return gateway;
}
