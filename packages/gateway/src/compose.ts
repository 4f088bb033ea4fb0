/**
 * The one composition step: every service of a started gateway, built once the store is open, each once
 * and in the order it is needed, and handed to the others as constructor arguments — the bot and its
 * courier, the pins, the send journal and the journaled API, the alerts, the bridge's link
 * (`io/bridge/endpoint.ts`), the card driver, the turns, the prompts, the status board, the forward and
 * the automation, the commands, the file sender, the frame dispatch, the Telegram handlers, the
 * retention and the webhook receiver, as the `Services` of `io/ops/services.ts`. Building starts nothing
 * and sends nothing: `io/ops/boot.ts` runs them in its fixed order, `gateway.ts` stops them. One clock,
 * the options' or the system's, goes to every service that keeps time.
 *
 * No rule is written here and no state is kept here: what the services share at run time has an owner
 * (the bridge's connection: the link; the bridge's `status` frames and polling's health: the status
 * board; the last errors: `io/ops/last-errors.ts`). Two edges run back up the order, and each is closed
 * once, in the open, after both ends exist: the bot's call results reach the alerts, which send through
 * the bot (`callResults.observe`); the bridge's frames reach the services that send to it
 * (`bridge.receive`), as grammY's `bot.use` hands the handlers to a bot that exists.
 *
 * This file is longer than 400 lines because it is one declaration, read top to bottom: each service
 * once, in the order the others need it. Split in two, the order would run across files, and a service
 * could again be reached before it is built (the layout test checks that it is not).
 */
import { join } from 'node:path';
import {
  createTransferPeer,
  type ExchangeOptions,
  type Logger,
  type Route,
  systemClock,
  TRANSFER_MAX_BYTES,
} from '@switchyard/protocol';
import { createAccess } from './core/intake/access.js';
import { createBudget } from './core/telegram/send-pacing.js';
import { createUsageLimits } from './core/turns/usage-limit.js';
import { createAutomation } from './io/automation/automation.js';
import { createWebhookServer } from './io/automation/webhook-server.js';
import { createFrameDispatch } from './io/bridge/bridge-frames.js';
import { createBridgeLink } from './io/bridge/endpoint.js';
import { createFileCarrier } from './io/bridge/file-carrier.js';
import { createForward } from './io/bridge/forward.js';
import { createHostNotice } from './io/bridge/host-notice.js';
import { createKnownChats } from './io/bridge/known-chats.js';
import { createCardDriver } from './io/card/card-driver.js';
import { createPins } from './io/card/pins.js';
import { createCommandRunner } from './io/commands/commands.js';
import { createTerminalCommands } from './io/commands/terminal-commands.js';
import { createTopicOpener } from './io/commands/topic-opener.js';
import { handlerFailed, telegramHandlers } from './io/intake/telegram-handlers.js';
import { createAlerts } from './io/ops/alerts.js';
import { createLastErrors } from './io/ops/last-errors.js';
import { noMetrics } from './io/ops/metrics.js';
import { createRetention } from './io/ops/retention.js';
import type { Services } from './io/ops/services.js';
import { createStatusBoard } from './io/ops/status-board.js';
import { createPrompts } from './io/prompts/prompts.js';
import { createFileSender } from './io/reply/files.js';
import { createConversationSettings } from './io/settings/conversation-settings.js';
import { createSettingsPanel } from './io/settings/settings-panel.js';
import { createSpendLedger } from './io/spend/spend-ledger.js';
import { createBot, createCallResults } from './io/telegram/bot-api.js';
import { createChatSender } from './io/telegram/chat-sender.js';
import { createCourier } from './io/telegram/courier.js';
import { createSendJournal, journaledApi } from './io/telegram/send-journal.js';
import { createNewerParts } from './io/telegram/server-parts.js';
import { createTurnNotices } from './io/turns/turn-notices.js';
import { createTurns } from './io/turns/turns.js';
import { createTranscriber } from './io/voice/transcriber.js';
import type { GatewayOptions } from './options.js';
import type { GatewayStore } from './store/store.js';

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

  // Telegram: the bot, its lanes, the journaled API and the messages the gateway itself says.
  const budget = createBudget(options.budget);
  const callResults = createCallResults();
  const bot = createBot({ token: options.token, apiRoot, budget, clock, logger, onResult: callResults.tell });
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
  const chat = createChatSender({ api, courier, logger });
  const newer = createNewerParts({ api: bot.api, courier, sendPublic: chat.reply, logger });

  // The operator's view: alerts, the last errors, the conversations' settings.
  const alerts = createAlerts({
    agent: options.agent,
    chat: options.alertChat,
    send: (route, text) => void chat.reply(route, text),
    stateDir: options.stateDir,
    clock,
    logger: logger.child({ component: 'alerts' }),
  });
  callResults.observe((method, result) => {
    metrics.telegramCall(method, result);
    alerts.callResult(result);
  });
  const lastErrors = createLastErrors();
  const chatSettings = createConversationSettings(store, { replies: options.replies ?? 'rich', card: true });

  // The bridge: the link first (everything below sends through it), its receiver handed over last.
  const bridge = createBridgeLink(options, store, { clock, logger });
  const knownChats = createKnownChats(store, [...options.allowUsers, ...(options.allowChats ?? [])]);
  // Files to and from a bridge that shares no disk with this side (taken from no other bridge: the dispatch).
  const transfers = createTransferPeer({
    exchange,
    maxBytes: TRANSFER_MAX_BYTES,
    send: (frame) => bridge.send(frame),
    connected: bridge.connected,
    clock,
    logger: logger.child({ component: 'transfers' }),
  });

  // The turns and what they show.
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
    clock,
    ...(options.placeholderRetryMs !== undefined ? { placeholderRetryMs: options.placeholderRetryMs } : {}),
  });
  const prompts = createPrompts({
    api,
    journal,
    courier,
    store,
    logger: logger.child({ component: 'prompts' }),
    send: bridge.send,
  });
  // The hand-over of a message to the bridge, and today's budgets, asked before the turns take one.
  const carry = createFileCarrier({
    send: bridge.send,
    transfers: options.filesOverProtocol ? transfers : undefined,
  });
  // A bridge on another host that cannot be reached: its waiting chats told once per outage.
  const hostNotice =
    options.remoteBridge && createHostNotice({ ...options.remoteBridge, clock, reply: chat.reply });
  const send = hostNotice ? hostNotice.watching(carry) : carry;
  const forward = createForward({ send, store, turns, reply: chat.reply, logger });
  const spend = createSpendLedger({
    store,
    spend: options.spend,
    pass: forward,
    turns,
    tell: chat.reply,
    onRefused: (scope) => metrics.budgetRefused(scope),
    clock,
    logger,
  });
  // The conversations waiting out a usage limit: told once, shown in /status, their schedules held.
  const usageLimits = createUsageLimits(options.spend?.timeZone);
  const board = createStatusBoard({
    store,
    turns,
    prompts,
    lastErrors,
    settings: chatSettings,
    spend,
    limits: usageLimits,
    timeZone: options.spend?.timeZone,
    connected: bridge.connected,
  });
  // The runs nobody typed: weighed and handed over as a Telegram message is.
  const { injector, schedules } = createAutomation({
    schedules: options.schedules,
    store,
    turns,
    courier,
    api,
    send: bridge.send,
    budget: spend.weigh,
    forward,
    noteChat: (chatId) => knownChats.note(chatId),
    reply: chat.reply,
    replyWithButtons: chat.replyWithButtons,
    allowedUser: (userId) => allowUsers.has(userId),
    limited: (route) => usageLimits.until(route) !== undefined,
    clock,
    logger,
  });

  // The commands and what they show.
  const terminal = createTerminalCommands({
    reply: (route, text) => void chat.reply(route, text),
    replyWithButtons: (route, text, buttons) => void chat.replyWithButtons(route, text, buttons),
    replyHtml: (route, html) => void chat.sendWith(route, html, { parse_mode: 'HTML' }),
    send: bridge.send,
    connected: bridge.connected,
    routes: { add: (commandId, route) => store.addCommandRoute(commandId, route) },
    atomically: (fn) => store.atomically(fn),
    clock,
    logger: logger.child({ component: 'terminal' }),
  });
  const settings = createSettingsPanel({
    settings: chatSettings,
    models,
    modes: options.allowedModes,
    status: board.status,
    api,
    courier,
    clock,
    logger: logger.child({ component: 'settings' }),
  });
  const commands = createCommandRunner({
    agent: options.agent,
    models,
    allowedModes: options.allowedModes,
    reply: newer.reply,
    replyWithButtons: (route, text, buttons) => void chat.replyWithButtons(route, text, buttons),
    send: bridge.send,
    connected: bridge.connected,
    status: board.status,
    listPins: () => store.listPins(),
    operators: options.operators ?? [],
    restartBridge: options.restartBridge,
    settings,
    spend,
    topics: createTopicOpener({
      bot,
      reply: chat.reply,
      clock,
      logger: logger.child({ component: 'topics' }),
    }),
    schedules,
    simulatedModel: options.simulatedModel === true,
    ...(options.statusTimeoutMs !== undefined ? { statusTimeoutMs: options.statusTimeoutMs } : {}),
    routes: {
      add: (commandId, route) => store.addCommandRoute(commandId, route),
      take: (commandId) => store.takeCommandRoute(commandId),
    },
    atomically: (fn) => store.atomically(fn),
    clock,
    logger: logger.child({ component: 'commands' }),
    terminal,
  });
  const files = createFileSender({
    api: bot.api,
    store,
    courier,
    send: bridge.send,
    exchange,
    clock,
    logger,
  });

  // What the bridge sends, to its owners; the link's receiver, handed over once.
  const onFrame = createFrameDispatch({
    turns,
    prompts,
    commands,
    files,
    transfers: options.filesOverProtocol ? transfers : undefined,
    schedules,
    spend,
    terminal,
    reply: (route, text) => void chat.reply(route, text),
    notices: createTurnNotices({ api, courier, lastErrors, logger: logger.child({ component: 'notices' }) }),
    onAgentStatus: board.noteStatus,
    allows: (route) => knownChats.allows(route),
    onUsageLimit: (frame) => {
      const notice = usageLimits.frame(frame);
      if (notice) void chat.reply(notice.route, notice.text);
    },
    onOperatorEvent: alerts.operatorEvent,
    setLastError: (message, route) => lastErrors.note(message, route),
    logger,
  });
  bridge.receive({
    onFrame,
    observe: metrics.frame,
    onConnectionChange: (connected) => {
      hostNotice?.connection(connected);
      transfers.connection(connected);
      turns.connection(connected);
      metrics.bridgeConnected(connected);
    },
    turns,
  });

  // What Telegram sends, to the handlers.
  const handlerOptions = {
    store,
    turns,
    prompts,
    budget: spend.weigh,
    forward,
    spend,
    allowed,
    allowedUser: (userId: number) => allowUsers.has(userId),
    noteChat: (chatId: number) => knownChats.note(chatId),
    listensToAll: (chatId: number) => listenAll.has(chatId),
    reply: chat.reply,
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
        chat.sendWith(route, notice.text, {
          reply_parameters: { message_id: replyTo, allow_sending_without_reply: true },
          ...(notice.quiet ? { disable_notification: true } : {}),
        }),
    },
    setLastError: (message: string | undefined, route?: Route) => lastErrors.note(message, route),
    clock,
    me: () => bot.botInfo,
    logger,
  };
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
    transfers,
    alerts,
    retention,
    hostNotice,
    endpoint: bridge.endpoint,
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
    offer: spend.offer,
    onPollingHealth: (health) => {
      board.notePolling(health);
      alerts.pollingHealth(health);
    },
    reply: chat.reply,
    status: board.status,
  };
}
