/**
 * The one composition step: every service of a started gateway, built once the store is open and handed
 * to each other as constructor arguments — the bot and its courier, the pins, the send journal and the
 * journaled API, the card driver, the turns, the prompts, the commands, the file sender, the alerts, the
 * retention, the bridge's endpoint (`io/bridge/endpoint.ts`), the frame dispatch, the automation, the
 * webhook receiver and the Telegram handlers, as the `Services` of `io/ops/services.ts`. Building starts
 * nothing and sends nothing: `io/ops/boot.ts` runs them in its fixed order, `gateway.ts` stops them.
 *
 * Ownership: what the services share at run time lives here and nowhere else — whether the bridge is
 * connected, the bridge's latest `status` per conversation, polling's health, the
 * last errors.
 */
import { join } from 'node:path';
import {
  conversationKey,
  type ExchangeOptions,
  type FrameOf,
  type GatewayToBridge,
  type Logger,
  type Route,
  systemClock,
} from '@switchyard/protocol';
import type { InlineButton } from './core/commands/command-texts.js';
import { createAccess } from './core/intake/access.js';
import { reportNotForwarded } from './core/intake/message-fit.js';
import { threadParams } from './core/intake/route.js';
import { createBudget } from './core/telegram/send-pacing.js';
import { createUsageLimits } from './core/turns/usage-limit.js';
import { createAutomation } from './io/automation/automation.js';
import { createWebhookServer } from './io/automation/webhook-server.js';
import { createFrameDispatch } from './io/bridge/bridge-frames.js';
import { createEndpoint } from './io/bridge/endpoint.js';
import { createKnownChats } from './io/bridge/known-chats.js';
import { createCardDriver } from './io/card/card-driver.js';
import { createPins } from './io/card/pins.js';
import { createCommandRunner } from './io/commands/commands.js';
import { createTerminalCommands } from './io/commands/terminal-commands.js';
import { createTopicOpener } from './io/commands/topic-opener.js';
import { handlerFailed, telegramHandlers } from './io/intake/telegram-handlers.js';
import { type AlertKind, createAlerts } from './io/ops/alerts.js';
import { createLastErrors } from './io/ops/last-errors.js';
import { noMetrics } from './io/ops/metrics.js';
import { createRetention } from './io/ops/retention.js';
import type { Services } from './io/ops/services.js';
import { createPrompts } from './io/prompts/prompts.js';
import { createFileSender } from './io/reply/files.js';
import { createConversationSettings } from './io/settings/conversation-settings.js';
import { createSettingsPanel } from './io/settings/settings-panel.js';
import { budgetGate, createSpendLedger } from './io/spend/spend-ledger.js';
import { createBot, errorText } from './io/telegram/bot-api.js';
import { createCourier } from './io/telegram/courier.js';
import { createSendJournal, journaledApi } from './io/telegram/send-journal.js';
import { createNewerParts } from './io/telegram/server-parts.js';
import { createTurnNotices } from './io/turns/turn-notices.js';
import { createTurns } from './io/turns/turns.js';
import { createTranscriber } from './io/voice/transcriber.js';
import type { GatewayOptions, GatewayStatus } from './options.js';
import type { GatewayStore } from './store/store.js';

/** The bridge's operator events an operator is alerted to, as alert kinds. */
const ALERTED_EVENTS: Partial<Record<FrameOf<'operator_event'>['kind'], AlertKind>> = {
  crash_loop: 'crash_loop',
  auth: 'auth',
  stuck: 'stuck',
};

/** Where files cross to and from the bridge: the option, or `<stateDir>/files`. */
export function exchangeOf(options: GatewayOptions): ExchangeOptions {
  return options.exchange ?? { dir: join(options.stateDir, 'files') };
}

/** Builds the services over the open `store`; see the module comment. */
export function compose(options: GatewayOptions, store: GatewayStore, logger: Logger): Services {
  const clock = options.clock ?? systemClock;
  const apiRoot = options.apiRoot ?? 'https://api.telegram.org';
  const models = options.models ?? ['opus', 'sonnet', 'haiku'];
  const exchange = exchangeOf(options);
  const metrics = options.metrics ?? noMetrics;
  const allowed = createAccess({
    allowUsers: options.allowUsers,
    ...(options.allowChats ? { allowChats: options.allowChats } : {}),
  });
  const allowUsers = new Set(options.allowUsers);
  const listenAll = new Set(options.listenAllChats ?? []);
  const budget = createBudget(options.budget);
  const bot = createBot({
    token: options.token,
    apiRoot,
    budget,
    clock,
    logger,
    onResult: (method, result) => {
      metrics.telegramCall(method, result);
      if (!result.ok && result.error_code === 429) alerts.tooManyRequests();
    },
  });
  const courier = createCourier(budget, clock);
  const pins = createPins({
    api: bot.api,
    store,
    courier,
    clock,
    logger: logger.child({ component: 'pins' }),
  });
  const journal = createSendJournal({
    api: bot.api,
    store,
    courier,
    clock,
    logger: logger.child({ component: 'sends' }),
  });
  const api = journaledApi(bot.api, journal);
  const send = (frame: GatewayToBridge): Promise<void> => endpoint.send(frame);
  const sendWith = (route: Route, text: string, other: Record<string, unknown>): Promise<unknown> =>
    courier
      .call(route.chatId, () => api.sendMessage(route.chatId, text, { ...threadParams(route), ...other }))
      .catch((error: unknown) => logger.warn({ event: 'reply_failed', error: errorText(error) }));
  const reply = (route: Route, text: string): Promise<unknown> => sendWith(route, text, {});
  const replyWithButtons = (route: Route, text: string, buttons: InlineButton[][]): Promise<unknown> =>
    sendWith(route, text, { reply_markup: { inline_keyboard: buttons } });
  const newer = createNewerParts({ api: bot.api, courier, sendPublic: reply, logger });

  // Shared run-time state (see the module comment).
  let connected = false;
  const bridge = { connected: () => connected };
  /** The latest `status` of each conversation (by `conversationKey`), and of the agent as a whole. */
  const conversationStatus = new Map<string, FrameOf<'status'>>();
  let agentStatus: FrameOf<'status'> | undefined;
  let polling: { ok: boolean; error?: string } = { ok: true };
  const lastErrors = createLastErrors();
  const spend = createSpendLedger({ store, spend: options.spend, clock, logger });
  const setLastError = (message: string | undefined, route?: Route): void => lastErrors.note(message, route);
  const timeZone = options.spend?.timeZone;
  const usageLimits = createUsageLimits(timeZone);

  const chatSettings = createConversationSettings(store, { replies: options.replies ?? 'rich', card: true });
  const alerts = createAlerts({
    agent: options.agent,
    chat: options.alertChat,
    send: (route, text) => void reply(route, text),
    stateDir: options.stateDir,
    clock,
    logger: logger.child({ component: 'alerts' }),
  });
  const cards = createCardDriver({
    api,
    journal,
    courier,
    pins,
    clock,
    logger: logger.child({ component: 'card' }),
    ...(options.card ? { card: options.card } : {}),
    onCardMessage: (turnId, messageId) => store.setTurnCard(turnId, messageId),
    cardShown: (route) => chatSettings.get(route).card,
  });
  const turns = createTurns({
    api,
    journal,
    courier,
    store,
    cards,
    logger: logger.child({ component: 'turns' }),
    bridge,
    serverParts: newer.state,
    ...(options.bridgeGraceMs !== undefined ? { bridgeGraceMs: options.bridgeGraceMs } : {}),
    ...(options.replies ? { replies: options.replies } : {}),
    repliesOf: (route) => chatSettings.stored(route).replies,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.placeholderRetryMs !== undefined ? { placeholderRetryMs: options.placeholderRetryMs } : {}),
  });
  const prompts = createPrompts({
    api,
    journal,
    courier,
    store,
    logger: logger.child({ component: 'prompts' }),
    send,
  });
  const status = (route?: Route): GatewayStatus => {
    const key = route ? conversationKey(route) : undefined;
    const own = key !== undefined ? conversationStatus.get(key) : agentStatus;
    const running = turns.live();
    const limitedUntil = route ? usageLimits.until(route) : undefined;
    return {
      bridgeConnected: connected,
      agentState: own?.state,
      model: own?.model,
      mode: own?.mode,
      runningTurns: key === undefined ? running : running.filter((t) => conversationKey(t.route) === key),
      inbox: store.inboxLength(),
      openPrompts: prompts.open(),
      pins: store.listPins().length,
      lastError: lastErrors.of(route),
      polling,
      ...(route ? { settings: chatSettings.get(route) } : {}),
      costToday: spend.costToday(route),
      ...(limitedUntil !== undefined ? { usageLimitUntil: limitedUntil } : {}),
      ...(timeZone !== undefined ? { timeZone } : {}),
    };
  };
  const terminal = createTerminalCommands({
    reply: (route, text) => void reply(route, text),
    replyWithButtons: (route, text, buttons) => void replyWithButtons(route, text, buttons),
    replyHtml: (route, html) => void sendWith(route, html, { parse_mode: 'HTML' }),
    send,
    connected: () => connected,
    routes: { add: (commandId, route) => store.addCommandRoute(commandId, route) },
    atomically: (fn) => store.atomically(fn),
    clock,
    logger: logger.child({ component: 'terminal' }),
  });
  const commands = createCommandRunner({
    agent: options.agent,
    models,
    allowedModes: options.allowedModes,
    reply: newer.reply,
    replyWithButtons: (route, text, buttons) => void replyWithButtons(route, text, buttons),
    send,
    connected: () => connected,
    status,
    listPins: () => store.listPins(),
    operators: options.operators ?? [],
    restartBridge: options.restartBridge,
    settings: { show: (route) => settings.show(route) },
    topics: createTopicOpener({ bot, reply, clock, logger: logger.child({ component: 'topics' }) }),
    // Bound late (as for the frames): the schedules are built once the endpoint exists.
    schedules: { show: (route) => schedules.show(route), press: (data, from) => schedules.press(data, from) },
    simulatedModel: options.simulatedModel === true,
    routes: {
      add: (commandId, route) => store.addCommandRoute(commandId, route),
      take: (commandId) => store.takeCommandRoute(commandId),
    },
    atomically: (fn) => store.atomically(fn),
    clock,
    logger: logger.child({ component: 'commands' }),
    terminal,
  });
  const settings = createSettingsPanel({
    settings: chatSettings,
    models,
    modes: options.allowedModes,
    status,
    commands,
    api,
    courier,
    clock,
    logger: logger.child({ component: 'settings' }),
  });
  const files = createFileSender({ api: bot.api, store, courier, send, exchange, clock, logger });
  const knownChats = createKnownChats(store, [...options.allowUsers, ...(options.allowChats ?? [])]);
  const onFrame = createFrameDispatch({
    turns,
    prompts,
    commands,
    files,
    schedules: { request: (frame) => schedules.request(frame) },
    terminal,
    reply: (route, text) => void reply(route, text),
    notices: createTurnNotices({ api, courier, lastErrors, logger: logger.child({ component: 'notices' }) }),
    onAgentStatus: (frame) => {
      agentStatus = frame;
      if (frame.route) conversationStatus.set(conversationKey(frame.route), frame);
    },
    allows: (route) => knownChats.allows(route),
    onUsageLimit: (frame) => {
      const notice = usageLimits.frame(frame);
      if (notice) void reply(notice.route, notice.text);
    },
    onOperatorEvent: (event) => {
      // An event of no conversation is the operator's to hear, never another chat's `/status`.
      const kind = ALERTED_EVENTS[event.kind] ?? (event.route ? undefined : 'agent_error');
      if (kind) alerts.raise(kind, event.message);
    },
    setLastError,
    logger,
  });
  const endpoint = createEndpoint(options, store, {
    onFrame: metrics.observeFrames(spend.observeFrames(onFrame)),
    onConnectionChange: (state) => {
      connected = state;
      turns.connection(state);
      metrics.bridgeConnected(state);
    },
    turns,
    logger,
  });
  const withinBudget = budgetGate(spend, { turns, reply, refused: (scope) => metrics.budgetRefused(scope) });
  const handlerOptions = {
    store,
    turns,
    prompts,
    forward: (frame: FrameOf<'user_message'>) =>
      void (withinBudget(frame) ? endpoint.send(frame) : Promise.resolve()).catch((error: unknown) => {
        logger.error({ event: 'forward_refused', error: String(error) }, 'message not queued');
        reportNotForwarded(frame, error, {
          turns,
          hasPlaceholder: (id) => store.getInbound(id)?.placeholderId !== undefined,
          reply: (route, text) => void reply(route, text),
        });
      }),
    allowed,
    allowedUser: (userId: number) => allowUsers.has(userId),
    noteChat: (chatId: number) => knownChats.note(chatId),
    listensToAll: (chatId: number) => listenAll.has(chatId),
    reply,
    newerParts: newer,
    commands,
    settings,
    models,
    attachments: {
      api: bot.api,
      fileUrl: (path: string) => `${apiRoot}/file/bot${options.token}/${path}`,
      exchange,
      clock,
    },
    voice: {
      transcriber: createTranscriber(options.voice, { clock }),
      notify: (route: Route, replyTo: number, notice: { text: string; quiet: boolean }) =>
        sendWith(route, notice.text, {
          reply_parameters: { message_id: replyTo, allow_sending_without_reply: true },
          ...(notice.quiet ? { disable_notification: true } : {}),
        }),
    },
    setLastError,
    clock,
    me: () => bot.botInfo,
    logger,
  };
  // The runs enter as the handlers' messages do: the same store, turns, forward and known chats.
  const { injector, schedules } = createAutomation({
    ...handlerOptions,
    schedules: options.schedules,
    courier,
    api,
    send,
    replyWithButtons,
    limited: (route: Route) => usageLimits.until(route) !== undefined,
  });
  bot.use(telegramHandlers(handlerOptions));
  bot.catch(handlerFailed(handlerOptions));
  const retention = createRetention({
    store,
    dirs: [exchange.dir],
    ...(options.retentionDays !== undefined ? { days: options.retentionDays } : {}),
    clock,
    logger: logger.child({ component: 'retention' }),
  });
  return {
    bot,
    store,
    courier,
    pins,
    journal,
    api,
    cards,
    turns,
    prompts,
    commands,
    files,
    alerts,
    retention,
    endpoint,
    injector,
    webhooks:
      options.webhooks &&
      createWebhookServer({
        ...options.webhooks,
        injector,
        exchange,
        onResult: (hook, result) => metrics.webhookResult(hook, result),
        clock,
        logger: logger.child({ component: 'webhooks' }),
      }),
    schedules,
    allowed,
    spend,
    withinBudget,
    onPollingHealth: (health) => {
      polling = health;
      if (health.error?.startsWith('conflict')) alerts.raise('conflict', health.error);
    },
    reply,
    status,
  };
}
