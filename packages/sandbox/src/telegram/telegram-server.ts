/**
 * The local Telegram Bot API server: real HTTP on 127.0.0.1 (node:http, nothing else) speaking the
 * subset of the Bot API Switchyard uses, plus a typed control handle through which tests (and the web
 * chat view) act as Telegram users and read every chat as a user sees it.
 *
 * Routes: `POST|GET /bot<token>/<method>` (JSON, form or multipart bodies) and
 * `GET /file/bot<token>/<file_path>`. Lifecycle: nothing listens until `start()`; `stop()` answers any
 * waiting long poll, aborts in-flight requests, closes every connection and resolves when the port is
 * released, leaving no timer behind.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BotApiError, refuse } from './api-error.js';
import { callMethod, canonicalMethod } from './bot-api.js';
import { ChatStore } from './chat-store.js';
import { EventHub, type SandboxListener } from './events.js';
import { type Fault, FaultPlan, type InjectedFailure } from './fault-plan.js';
import type { MethodContext } from './method-context.js';
import type { NewerApiPart } from './newer-api.js';
import { DEFAULT_RATE_LIMITS, RateLimiter, type RateLimits } from './rate-limiter.js';
import type {
  CallbackQueryRecord,
  ChatActionRecord,
  DraftRecord,
  DraftStopRecord,
  SandboxChat,
  SandboxMessage,
  SandboxTopic,
} from './records.js';
import { RequestParams } from './request-params.js';
import { ApiCallLog, type ApiCallRecord, type ApiStats } from './stats.js';
import { UpdateQueue } from './update-queue.js';
import {
  type ButtonSelector,
  type DocumentInput,
  type PhotoInput,
  type SendOptions,
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
  type VoiceInput,
} from './user-actions.js';
import { createWebView, type WebView } from './web/web-view.js';
import type { WireBotUser, WireUpdate, WireUser } from './wire.js';

/** How to create a {@link TelegramServer}. Every field has a sandbox-friendly default. */
export interface TelegramServerOptions {
  /** The bot token requests must carry; the digits before ':' are the bot's user id. Default `123456789:sandbox-token`. */
  token?: string;
  /** The bot's name and username. */
  bot?: { firstName?: string; username?: string };
  /** The user the control API acts as when none is named. */
  user?: { id?: number; firstName?: string; lastName?: string; username?: string };
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Flood limits (merged over the defaults), or false for none. Default: Telegram-like limits. */
  rateLimits?: Partial<RateLimits> | false;
  /** The clock, in milliseconds; default wall time with sub-millisecond precision. */
  now?: () => number;
  /** The first `update_id`. Default 1. */
  firstUpdateId?: number;
  /** How long a callback query may wait for `answerCallbackQuery`. Default 60 s. */
  callbackQueryTtlMs?: number;
  /** `getFile` refuses larger files. Default 20 MB, Telegram's limit for bots. */
  maxDownloadBytes?: number;
  /** Request bodies above this are refused with 413. Default 50 MB, Telegram's upload limit. */
  maxRequestBytes?: number;
  /** Behave as a server older than these Bot API parts (see `newer-api.ts`). Default: it has them all. */
  lacks?: readonly NewerApiPart[];
  /** Serve the web chat view at `/`. Default true. */
  webView?: boolean;
  /** A line the web view shows above every chat (e.g. "replies come from a scripted model"). */
  banner?: string;
  /**
   * The bot has topic mode in private chats (Bot API 9.3, BotFather's Threaded Mode): `getMe` says
   * `has_topics_enabled`, `createForumTopic` works in private chats, and users open topics there
   * (`createTopic`). Default false; {@link TelegramServer.setPrivateTopics} changes it.
   */
  privateTopics?: boolean;
}

export type { InjectedFailure } from './fault-plan.js';

/** A chat as its user sees it. */
export interface ChatView {
  chat: SandboxChat;
  /** Messages still there, in order (service messages included, `kind: 'service'`). */
  messages: SandboxMessage[];
  /** Messages that were deleted, with their last content. */
  deleted: SandboxMessage[];
  /** Pinned messages, oldest first; the last one is in the pinned bar. */
  pinned: SandboxMessage[];
  actions: ChatActionRecord[];
  drafts: DraftRecord[];
  /** Presses of a draft's stop button. */
  stops: DraftStopRecord[];
}

/** Where the server listens once started. */
export interface TelegramServerAddress {
  /** What grammY's `client.apiRoot` takes, e.g. `http://127.0.0.1:4567`. */
  apiRoot: string;
  /**
   * The web chat view's address with this run's secret (`http://127.0.0.1:<port>/?k=<secret>`), or
   * undefined when it is disabled. The view refuses requests without the secret, and any whose Host or
   * Origin is not a loopback address on this port (`web/view-access.ts`).
   */
  webUrl: string | undefined;
  port: number;
}

/** The running sandbox: lifecycle, Telegram users' actions, and what the chats look like. */
export interface TelegramServer {
  /** Listens; resolves with the address. */
  start(): Promise<TelegramServerAddress>;
  /** Ends long polls and connections; resolves when the port is closed. Idempotent. */
  stop(): Promise<void>;
  /** The API root; throws before `start()`. */
  readonly apiRoot: string;
  readonly token: string;
  /** The bot, as `getMe` returns it. */
  readonly botUser: WireBotUser;
  /** The user actions default to. */
  readonly defaultUser: WireUser;

  // --- world setup
  /** Registers another user (for groups with several people). */
  addUser(user: { id?: number; firstName: string; lastName?: string; username?: string }): WireUser;
  /** The private chat with a user (default: the default user), created on first use. Its id is the user's id. */
  privateChat(user?: WireUser): SandboxChat;
  /** Creates a group: basic by default, a supergroup with `supergroup`, a forum with `forum` (topics by name). */
  createGroup(options: {
    title: string;
    supergroup?: boolean;
    forum?: boolean;
    botCanPin?: boolean;
    topics?: string[];
    /** The reactions the group allows (`available_reactions`); default all, `[]` none. */
    availableReactions?: string[];
  }): SandboxChat;
  /** Changes the reactions a chat allows (undefined: all); others are refused with `REACTION_INVALID`. */
  setAvailableReactions(chatId: number, emoji: string[] | undefined): void;
  /**
   * Opens a topic as a user would: in a forum, or in a private chat while the bot has private topics
   * ({@link TelegramServerOptions.privateTopics}); returns it with its `threadId`.
   */
  createTopic(chatId: number, name: string): SandboxTopic;
  /** Turns the bot's topic mode in private chats on or off (what `getMe` reports from then on). */
  setPrivateTopics(enabled: boolean): void;
  /** Grants or removes the bot's right to pin in a group. */
  setBotCanPin(chatId: number, canPin: boolean): void;
  /** Replaces the flood limits (merged over the current ones), or disables them with `false`. */
  setRateLimits(limits: Partial<RateLimits> | false): void;
  /** Behaves from now on as a server lacking `parts` (empty: a current server with all of them). */
  setLacks(parts: readonly NewerApiPart[]): void;
  /** Sets (or clears) the line the web view shows above every chat. */
  setBanner(text: string | undefined): void;
  /** Makes the next `times` (default 1) calls of `method` (optionally only for `chatId`) fail as given. */
  failNext(method: string, failure: InjectedFailure, options?: { times?: number; chatId?: number }): void;
  /**
   * Makes every call of `method` (`*`: every method; optionally only for `chatId`) fail as given for the
   * next `durationMs`: a 5xx outage, a 429 storm. Counted failures (`failNext`, `dropNext`) go first.
   */
  failFor(method: string, failure: InjectedFailure, durationMs: number, options?: { chatId?: number }): void;
  /**
   * Closes the connection of the next `times` (default 1) calls of `method` without an answer. By
   * default the call is carried out first, so the client cannot know its outcome (the message exists);
   * with `afterCall: false` it is dropped unperformed.
   */
  dropNext(method: string, options?: { times?: number; chatId?: number; afterCall?: boolean }): void;
  /** `getUpdates` neither answers nor delivers for the next `durationMs` (a stalled long poll). */
  stallUpdates(durationMs: number): void;
  /** Ends every planned fault now. */
  clearFaults(): void;
  /** Faults carried out so far: error answers, dropped connections, stalled polls. */
  faultsInjected(): { fail: number; drop: number; stall: number };

  // --- a user's actions (each queues the update the bot receives)
  sendText(chatId: number, text: string, options?: SendOptions): SandboxMessage;
  sendPhoto(chatId: number, photo: PhotoInput): SandboxMessage;
  sendDocument(chatId: number, document: DocumentInput): SandboxMessage;
  /** Sends a voice note (OGG by default) with its duration, as a phone's microphone button does. */
  sendVoice(chatId: number, voice: VoiceInput): SandboxMessage;
  editText(chatId: number, messageId: number, text: string): SandboxMessage;
  /** Presses an inline button; returns the callback query (its id, and later its `answer`). */
  pressButton(
    chatId: number,
    messageId: number,
    button: ButtonSelector,
    options?: { from?: WireUser; force?: boolean },
  ): CallbackQueryRecord;
  /** The current state of a callback query: `answer` is set once the bot answered. */
  callbackQuery(id: string): CallbackQueryRecord | undefined;
  pinAsUser(chatId: number, messageId: number, from?: WireUser): void;
  /**
   * Presses the stop button of the chat's live draft (sent with `can_stop`; in a private chat with
   * topics, the draft of topic `threadId`); queues `stopped_message_generation`. Throws when no such
   * draft is shown.
   */
  stopDraft(chatId: number, options?: { threadId?: number }): DraftStopRecord;
  unpinAsUser(chatId: number, messageId: number): boolean;

  // --- reading
  chats(): SandboxChat[];
  /** A chat as its user sees it; throws for an unknown chat. */
  chat(chatId: number): ChatView;
  /** Visible messages (optionally one topic's; `threadId` 0 is General), or all with `includeDeleted`. */
  messages(chatId: number, options?: { threadId?: number; includeDeleted?: boolean }): SandboxMessage[];
  message(chatId: number, messageId: number): SandboxMessage | undefined;
  /** Updates queued and not yet confirmed by the bot. */
  pendingUpdates(): WireUpdate[];
  stats(): ApiStats;
  /** Logged Bot API calls, oldest first. */
  calls(method?: string): ApiCallRecord[];
  resetStats(): void;

  // --- change notification
  /** Every change, as it happens; returns the unsubscribe function. */
  subscribe(listener: SandboxListener): () => void;
  /**
   * Resolves with the first truthy value of `check`, evaluated now and after every event; rejects after
   * `timeoutMs` (default 5000) with the last evaluation's description, or when `signal` aborts.
   */
  waitFor<T>(
    check: () => T | undefined | null | false,
    options?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<T>;
}

const DEFAULT_TOKEN = '123456789:sandbox-token';

/** Creates the sandbox server; nothing listens until `start()`. */
export function createTelegramServer(options: TelegramServerOptions = {}): TelegramServer {
  const token = options.token ?? DEFAULT_TOKEN;
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

  /** Waits out a stalled `getUpdates`; the call proceeds after (or ends with the client). */
  const waitOutStall = async (signal: AbortSignal): Promise<void> => {
    for (let left = faults.stalledFor(); left > 0 && !signal.aborted; left = faults.stalledFor())
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
  };

  async function handleApi(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    method: string,
  ): Promise<void> {
    const at = now();
    const canonical = canonicalMethod(method);
    const name = canonical ?? method;
    log.arrived(name);
    const controller = new AbortController();
    inFlight.add(controller);
    res.on('close', () => controller.abort());
    let params: RequestParams | undefined;
    let body: unknown;
    let fault: Fault | undefined;
    try {
      params = RequestParams.parse(
        req.headers['content-type'],
        await readBody(req, options.maxRequestBytes),
        url.searchParams,
      );
      const raw = Number(params.raw('chat_id'));
      fault = faults.take(name, Number.isSafeInteger(raw) ? raw : undefined);
      if (fault?.kind === 'fail')
        body = new BotApiError(
          fault.failure.errorCode ?? 400,
          fault.failure.description,
          fault.failure.retryAfter,
        ).toWire();
      else if (fault?.kind === 'drop' && !fault.afterCall) body = undefined;
      else {
        if (name === 'getUpdates') await waitOutStall(controller.signal);
        body = canonical
          ? await callMethod(canonical, params, methodContext(controller.signal))
          : refuse('notFound').toWire();
      }
    } catch (err) {
      body =
        err instanceof BotApiError ? err.toWire() : { ok: false, error_code: 500, description: String(err) };
    } finally {
      inFlight.delete(controller);
    }
    if (fault?.kind === 'drop') {
      const dropped: ApiCallRecord = {
        method: name,
        ok: false,
        at,
        durationMs: now() - at,
        description: 'connection dropped',
        ...(Number.isSafeInteger(Number(params?.raw('chat_id')))
          ? { chatId: Number(params?.raw('chat_id')) }
          : {}),
      };
      log.record(dropped);
      hub.emit({ type: 'api_call', call: { ...dropped } });
      res.socket?.destroy();
      return;
    }
    const reply = body as { ok: boolean; error_code?: number; description?: string };
    const chatId = Number(params?.raw('chat_id'));
    const call: ApiCallRecord = {
      method: name,
      ok: reply.ok,
      at,
      durationMs: now() - at,
      ...(Number.isSafeInteger(chatId) ? { chatId } : {}),
      ...(reply.error_code !== undefined ? { errorCode: reply.error_code } : {}),
      ...(reply.description !== undefined ? { description: reply.description } : {}),
    };
    log.record(call);
    hub.emit({ type: 'api_call', call: { ...call } });
    sendJson(res, reply.error_code ?? 200, body);
  }

  function handleFile(res: ServerResponse, path: string): void {
    const file = store.files.byPath(decodeURIComponent(path));
    if (!file) {
      sendJson(res, 404, refuse('notFound').toWire());
      return;
    }
    res.writeHead(200, {
      'content-type': file.mimeType ?? 'application/octet-stream',
      'content-length': String(file.bytes.byteLength),
    });
    res.end(file.bytes);
  }

  function route(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const api = /^\/bot([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    const match = api ?? download;
    if (!match) {
      if (web?.handle(req, res, url)) return;
      sendJson(res, 404, refuse('notFound').toWire());
      return;
    }
    if (match[1] !== token) {
      sendJson(res, 401, refuse('unauthorized').toWire());
      return;
    }
    if (download) {
      handleFile(res, download[2] ?? '');
      return;
    }
    handleApi(req, res, url, api?.[2] ?? '').catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { ok: false, error_code: 500, description: String(err) });
    });
  }

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
      const s = createServer(route);
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
    callbackQuery: (id) => store.callbackQuery(id),
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

/** Room for a 50 MB upload (Telegram's limit for bots, checked per file by the methods) and its form fields. */
const MAX_BODY_BYTES = 52 * 1024 * 1024;

async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new BotApiError(413, 'Request Entity Too Large');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}
