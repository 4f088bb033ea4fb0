/**
 * The local Telegram Bot API server: real HTTP on 127.0.0.1 (node:http, nothing else) speaking the
 * subset of the Bot API Switchyard uses, plus a typed control handle through which tests (and the web
 * chat view) act as Telegram users and read every chat as a user sees it.
 *
 * Routes: `POST|GET /bot<token>/<method>` (JSON, form or multipart bodies) and
 * `GET /file/bot<token>/<file_path>` (`api-routes.ts`); the options and the handle's contract are
 * `server-options.ts`. Lifecycle: nothing listens until `start()`; `stop()` answers any
 * waiting long poll, aborts in-flight requests, closes every connection and resolves when the port is
 * released, leaving no timer behind.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRoutes } from './api-routes.js';
import { ChatStore } from './chat-store.js';
import { EventHub } from './events.js';
import { FaultPlan } from './fault-plan.js';
import type { MethodContext } from './method-context.js';
import type { NewerApiPart } from './newer-api.js';
import { DEFAULT_RATE_LIMITS, RateLimiter } from './rate-limiter.js';
import type { SandboxChat } from './records.js';
import type { TelegramServer, TelegramServerAddress, TelegramServerOptions } from './server-options.js';
import { ApiCallLog } from './stats.js';
import { UpdateQueue } from './update-queue.js';
import {
  type UserActionContext,
  userEditsText,
  userPins,
  userPressesButton,
  userSendsDocument,
  userSendsPhoto,
  userSendsText,
  userSendsVoice,
  userStopsDraft,
  userUnpins,
} from './user-actions.js';
import { createWebView, type WebView } from './web/web-view.js';
import type { WireBotUser } from './wire.js';

/** The bot's id in the default token. */
const DEFAULT_BOT_ID = 123456789;

/** Creates the sandbox server; nothing listens until `start()`. */
export function createTelegramServer(options: TelegramServerOptions = {}): TelegramServer {
  // New on every run, like the web view's key: a token written in a page or a script of an earlier run
  // does not reach this one.
  const token = options.token ?? `${DEFAULT_BOT_ID}:${randomBytes(24).toString('base64url')}`;
  const botId = Number(/^(\d+):/.exec(token)?.[1] ?? Number.NaN);
  if (!Number.isSafeInteger(botId)) throw new Error(`bot token "${token}" must look like <digits>:<secret>`);
  const now = options.now ?? (() => performance.timeOrigin + performance.now());
  const hub = new EventHub();
  const store = new ChatStore(hub, now);
  const updates = new UpdateQueue(hub, now, options.firstUpdateId ?? 1);
  const limiter = new RateLimiter(
    options.rateLimits === false ? undefined : { ...DEFAULT_RATE_LIMITS, ...options.rateLimits },
    now,
  );
  const log = new ApiCallLog();
  const botUser: WireBotUser = {
    id: botId,
    is_bot: true,
    first_name: options.bot?.firstName ?? 'Switchyard Sandbox',
    username: options.bot?.username ?? 'switchyard_sandbox_bot',
    can_join_groups: true,
    can_read_all_group_messages: true,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
    has_topics_enabled: options.privateTopics === true,
    allows_users_to_create_topics: options.privateTopics === true,
  };
  const defaultUser = store.addUser({
    id: options.user?.id ?? 100_000_001,
    is_bot: false,
    first_name: options.user?.firstName ?? 'Sandbox',
    language_code: 'en',
    ...(options.user?.lastName !== undefined ? { last_name: options.user.lastName } : { last_name: 'User' }),
    ...(options.user?.username !== undefined
      ? { username: options.user.username }
      : { username: 'sandbox_user' }),
  });
  const users: UserActionContext = { store, updates, defaultUser };
  const faults = new FaultPlan(now);
  const inFlight = new Set<AbortController>();
  let nextUserId = defaultUser.id + 1;
  let server: Server | undefined;
  let address: TelegramServerAddress | undefined;
  let stopping: Promise<void> | undefined;
  let banner = options.banner;
  let lacks: ReadonlySet<NewerApiPart> = new Set(options.lacks ?? []);
  let web: WebView | undefined;
  /** The web view's secret for this server's life: in `webUrl`, required by every view request. */
  const webSecret = randomBytes(18).toString('base64url');

  const methodContext = (signal: AbortSignal): MethodContext => ({
    store,
    updates,
    limiter,
    bot: botUser,
    signal,
    now,
    callbackQueryTtlMs: options.callbackQueryTtlMs ?? 60_000,
    maxDownloadBytes: options.maxDownloadBytes ?? 20 * 1024 * 1024,
    lacks,
  });

  const scoped = (method: string, chatId: number | undefined) => ({
    method,
    ...(chatId !== undefined ? { chatId } : {}),
  });

  const requireChatView = (chatId: number): SandboxChat => {
    const chat = store.chat(chatId);
    if (!chat) throw new Error(`no chat ${chatId} in the sandbox: create it first`);
    return chat;
  };

  const handle: TelegramServer = {
    async start() {
      if (server) throw new Error('the Telegram sandbox is already started: stop it before starting again');
      const s = createServer(
        createRoutes({
          token,
          store,
          hub,
          log,
          faults,
          inFlight,
          now,
          maxRequestBytes: options.maxRequestBytes,
          methodContext,
          web: () => web,
        }),
      );
      server = s;
      s.keepAliveTimeout = 5_000;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
          s.off('error', reject);
          resolve();
        });
      });
      const info = s.address() as AddressInfo;
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      const root = `http://${host}:${info.port}`;
      const loopback = info.address === '::1' ? '[::1]' : '127.0.0.1';
      const webUrl = web ? `http://${loopback}:${info.port}/?k=${webSecret}` : undefined;
      address = { apiRoot: root, webUrl, port: info.port };
      return { ...address };
    },

    stop() {
      stopping ??= (async () => {
        updates.stop();
        web?.close();
        const s = server;
        if (!s) return;
        // Let the answered polls flush before the sockets go.
        await new Promise<void>((resolve) => setImmediate(resolve));
        for (const controller of inFlight) controller.abort();
        const closed = new Promise<void>((resolve) => s.close(() => resolve()));
        s.closeAllConnections();
        await closed;
      })();
      return stopping;
    },

    get apiRoot() {
      if (!address) throw new Error('the Telegram sandbox is not started: await start() first');
      return address.apiRoot;
    },
    token,
    botUser,
    defaultUser,

    addUser(user) {
      return store.addUser({
        id: user.id ?? nextUserId++,
        is_bot: false,
        first_name: user.firstName,
        ...(user.lastName !== undefined ? { last_name: user.lastName } : {}),
        ...(user.username !== undefined ? { username: user.username } : {}),
      });
    },
    privateChat(user = defaultUser) {
      return store.createChat({ type: 'private', user });
    },
    createGroup(spec) {
      const chat = store.createChat({
        type: spec.supergroup || spec.forum ? 'supergroup' : 'group',
        title: spec.title,
        ...(spec.forum !== undefined ? { isForum: spec.forum } : {}),
        ...(spec.botCanPin !== undefined ? { botCanPin: spec.botCanPin } : {}),
        ...(spec.availableReactions !== undefined ? { availableReactions: spec.availableReactions } : {}),
      });
      for (const name of spec.topics ?? []) store.addTopic(chat.id, name, defaultUser);
      return requireChatView(chat.id);
    },
    setAvailableReactions(chatId, emoji) {
      store.setAvailableReactions(chatId, emoji);
    },
    createTopic(chatId, name) {
      const chat = requireChatView(chatId);
      if (chat.type === 'private' && !botUser.allows_users_to_create_topics)
        throw new Error('the bot has no topics in private chats: create the server with privateTopics: true');
      return store.addTopic(chatId, name, chat.user ?? defaultUser);
    },
    setPrivateTopics(enabled) {
      botUser.has_topics_enabled = enabled;
      botUser.allows_users_to_create_topics = enabled;
    },
    setBotCanPin(chatId, canPin) {
      store.setBotCanPin(chatId, canPin);
    },
    setRateLimits(limits) {
      limiter.configure(limits);
    },
    setLacks(parts) {
      lacks = new Set(parts);
    },
    setBanner(text) {
      banner = text;
    },
    failNext(method, failure, opts = {}) {
      faults.next(scoped(method, opts.chatId), { kind: 'fail', failure }, opts.times ?? 1);
    },
    failFor(method, failure, durationMs, opts = {}) {
      faults.during(scoped(method, opts.chatId), { kind: 'fail', failure }, durationMs);
    },
    dropNext(method, opts = {}) {
      faults.next(
        scoped(method, opts.chatId),
        { kind: 'drop', afterCall: opts.afterCall ?? true },
        opts.times ?? 1,
      );
    },
    stallUpdates: (durationMs) => faults.stall(durationMs),
    clearFaults: () => faults.clear(),
    faultsInjected: () => ({ ...faults.injected }),

    sendText: (chatId, text, opts) => userSendsText(users, chatId, text, opts),
    sendPhoto: (chatId, photo) => userSendsPhoto(users, chatId, photo),
    sendDocument: (chatId, document) => userSendsDocument(users, chatId, document),
    sendVoice: (chatId, voice) => userSendsVoice(users, chatId, voice),
    editText: (chatId, messageId, text) => userEditsText(users, chatId, messageId, text),
    pressButton: (chatId, messageId, button, opts) =>
      userPressesButton(users, chatId, messageId, button, opts),
    callbackQuery: (id) => store.queries.get(id),
    pinAsUser: (chatId, messageId, from) => userPins(users, chatId, messageId, from),
    stopDraft: (chatId, opts) => userStopsDraft(users, chatId, now(), opts?.threadId),
    unpinAsUser: (chatId, messageId) => userUnpins(users, chatId, messageId),

    chats: () => store.chats(),
    chat(chatId) {
      const chat = requireChatView(chatId);
      const all = store.messages(chatId, { includeDeleted: true });
      return {
        chat,
        messages: all.filter((m) => !m.deleted),
        deleted: all.filter((m) => m.deleted),
        pinned: chat.pinned.flatMap((id) => all.filter((m) => m.messageId === id)),
        actions: store.actions(chatId),
        drafts: store.drafts(chatId),
        stops: store.stops(chatId),
      };
    },
    messages: (chatId, opts) => store.messages(chatId, opts),
    message(chatId, messageId) {
      const message = store.message(chatId, messageId);
      return message && structuredClone(message);
    },
    pendingUpdates: () => updates.pending(),
    stats: () => log.stats(),
    calls: (method) => log.calls(method),
    resetStats: () => log.reset(),

    subscribe: (listener) => hub.subscribe(listener),
    waitFor(check, opts = {}) {
      return hub.until(check, opts.timeoutMs ?? 5_000, opts.signal);
    },
  };
  if (options.webView !== false) {
    web = createWebView({
      server: handle,
      file: (fileId) => store.files.get(fileId),
      banner: () => banner,
      secret: webSecret,
    });
  }
  return handle;
}
