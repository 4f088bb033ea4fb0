/**
 * The Telegram sandbox's contract: the options it is created with, where it listens, and the control
 * handle through which tests (and the web chat view) act as users and read every chat. The server itself
 * is `telegram-server.ts`; its HTTP routes `api-routes.ts`.
 */
import type { SandboxListener } from './events.js';
import type { InjectedFailure } from './fault-plan.js';
import type { NewerApiPart } from './newer-api.js';
import type { RateLimits } from './rate-limiter.js';
import type {
  CallbackQueryRecord,
  ChatActionRecord,
  DraftRecord,
  DraftStopRecord,
  SandboxChat,
  SandboxMessage,
  SandboxTopic,
} from './records.js';
import type { ApiCallRecord, ApiStats } from './stats.js';
import type { ButtonSelector, DocumentInput, PhotoInput, SendOptions, VoiceInput } from './user-actions.js';
import type { WireBotUser, WireUpdate, WireUser } from './wire.js';

/** How to create a {@link TelegramServer}. Every field has a sandbox-friendly default. */
export interface TelegramServerOptions {
  /**
   * The bot token requests must carry; the digits before ':' are the bot's user id. Default
   * `123456789:<random>`, new for every server (read it back from {@link TelegramServer.token}).
   */
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
   * Origin is not a loopback address on this port (`web/view-access.ts`), as the Bot API routes do.
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
  /** The token the Bot API routes require: the one given, or this server's random one. */
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
