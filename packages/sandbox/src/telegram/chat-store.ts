/**
 * The sandbox's world: users, chats, forum topics, every message with its edit history, pins, chat
 * actions, drafts, callback queries, files and bot commands. It is the single owner of that state; the
 * Bot API methods and the test control API both change it only through this class, which emits a
 * {@link SandboxEvent} for every visible change. No I/O and no timers: time comes from the injected clock.
 */
import { randomBytes } from 'node:crypto';
import type { EventHub } from './events.js';
import { renderTelegramHtml } from './html.js';
import type {
  ChatType,
  WireBotCommand,
  WireInlineKeyboardMarkup,
  WireMessageEntity,
  WireUser,
} from './wire.js';

/** A forum topic; `threadId` is the id of the service message that created it, as in Telegram. */
export interface SandboxTopic {
  threadId: number;
  name: string;
}

/** A chat's settings and current pins. */
export interface SandboxChat {
  id: number;
  type: ChatType;
  /** Group title, or the user's name for a private chat. */
  title: string;
  /** The other party of a private chat. */
  user?: WireUser;
  isForum: boolean;
  topics: SandboxTopic[];
  /** Whether the bot may pin and unpin here (always true in private chats). */
  botCanPin: boolean;
  /** Pinned message ids, oldest first; the last one is what `getChat().pinned_message` returns. */
  pinned: number[];
}

/** One version of a message's visible content. */
export interface MessageVersion {
  /** Text, or caption for a photo or document. */
  text: string;
  entities: WireMessageEntity[];
  /** `text` with its entities as Telegram HTML, ready to display. */
  html: string;
  replyMarkup?: WireInlineKeyboardMarkup;
  /** When this version appeared, in the server clock's milliseconds. */
  at: number;
}

/** A file attached to a message. */
export interface SandboxFileRef {
  fileId: string;
  fileUniqueId: string;
  size: number;
  fileName?: string;
  mimeType?: string;
  width?: number;
  height?: number;
}

/** What a service message announces. */
export type ServiceAction =
  | { type: 'pinned_message'; messageId: number }
  | { type: 'forum_topic_created'; name: string };

/** A message as the chat's user sees it, with everything it has been. */
export interface SandboxMessage {
  chatId: number;
  messageId: number;
  /** The forum topic; absent in the General topic and in chats without topics. */
  threadId?: number;
  from: 'user' | 'bot';
  sender: WireUser;
  kind: 'text' | 'photo' | 'document' | 'service';
  /** Current text (or caption), entities, HTML and keyboard: the last entry of `history`. */
  text: string;
  entities: WireMessageEntity[];
  html: string;
  replyMarkup?: WireInlineKeyboardMarkup;
  /** Every version, oldest first; length 1 means never edited. */
  history: MessageVersion[];
  replyToMessageId?: number;
  /** The photo (largest size) or document. */
  file?: SandboxFileRef;
  service?: ServiceAction;
  /** Sent at, in the server clock's milliseconds. */
  date: number;
  editedAt?: number;
  deleted: boolean;
  deletedAt?: number;
  pinned: boolean;
  /** The bot's reactions on the message (emoji). */
  reactions: string[];
  /** Sent (or, for a pin notice, pinned) with `disable_notification`: the user got no notification. */
  silent: boolean;
}

/** A chat action the bot sent ("typing"); Telegram shows it for 5 s or until the bot's next message. */
export interface ChatActionRecord {
  chatId: number;
  threadId?: number;
  action: string;
  at: number;
}

/** One `sendMessageDraft` call. */
export interface DraftRecord {
  chatId: number;
  threadId?: number;
  draftId: number;
  text: string;
  entities: WireMessageEntity[];
  html: string;
  at: number;
}

/** How the bot answered a callback query. */
export interface CallbackAnswer {
  text?: string;
  showAlert: boolean;
  url?: string;
  at: number;
}

/** A button press and, once the bot has answered it, the answer. */
export interface CallbackQueryRecord {
  id: string;
  chatId: number;
  messageId: number;
  threadId?: number;
  data: string;
  from: WireUser;
  at: number;
  answer?: CallbackAnswer;
}

/** A stored file's content and metadata. */
export interface StoredFile extends SandboxFileRef {
  /** Path under `/file/bot<token>/`. */
  filePath: string;
  bytes: Uint8Array;
  /** For a photo: the smaller size listed before it in `Message.photo`. */
  thumbnailFileId?: string;
}

/** The content of a new message. */
export interface NewMessage {
  from: 'user' | 'bot';
  sender: WireUser;
  kind: SandboxMessage['kind'];
  text: string;
  entities: WireMessageEntity[];
  threadId?: number | undefined;
  replyMarkup?: WireInlineKeyboardMarkup | undefined;
  replyToMessageId?: number | undefined;
  file?: SandboxFileRef | undefined;
  service?: ServiceAction | undefined;
  silent?: boolean | undefined;
}

/** The new visible content of an edited message. */
export interface MessageContent {
  text: string;
  entities: WireMessageEntity[];
  replyMarkup?: WireInlineKeyboardMarkup | undefined;
}

/** How to create a chat. */
export type ChatSpec =
  | { type: 'private'; user: WireUser }
  | { type: 'group' | 'supergroup'; title: string; isForum?: boolean; botCanPin?: boolean; id?: number };

interface ChatRecord extends SandboxChat {
  messages: Map<number, SandboxMessage>;
  actions: ChatActionRecord[];
  drafts: DraftRecord[];
  nextMessageId: number;
}

const clone = <T>(value: T): T => structuredClone(value);

/** The sandbox's state. See the file comment for the ownership rule. */
export class ChatStore {
  readonly #hub: EventHub;
  readonly #now: () => number;
  readonly #users = new Map<number, WireUser>();
  readonly #chats = new Map<number, ChatRecord>();
  readonly #queries = new Map<string, CallbackQueryRecord>();
  readonly #files = new Map<string, StoredFile>();
  readonly #filesByPath = new Map<string, StoredFile>();
  readonly #commands = new Map<string, WireBotCommand[]>();
  #nextGroupId = 1;
  #nextFile = 1;
  #nextQuery = 1;

  constructor(hub: EventHub, now: () => number) {
    this.#hub = hub;
    this.#now = now;
  }

  // --- users and chats -------------------------------------------------------------------------

  /** Registers (or replaces) a user. */
  addUser(user: WireUser): WireUser {
    this.#users.set(user.id, { ...user });
    return { ...user };
  }

  /** A registered user. */
  user(id: number): WireUser | undefined {
    const user = this.#users.get(id);
    return user && { ...user };
  }

  /** Creates a chat; a private chat's id is its user's id, as in Telegram. Idempotent for private chats. */
  createChat(spec: ChatSpec): SandboxChat {
    if (spec.type === 'private') {
      const existing = this.#chats.get(spec.user.id);
      if (existing) return this.#snapshotChat(existing);
      this.addUser(spec.user);
      const title = [spec.user.first_name, spec.user.last_name].filter(Boolean).join(' ');
      return this.#insertChat({ id: spec.user.id, type: 'private', title, user: spec.user, isForum: false });
    }
    const n = this.#nextGroupId++;
    const id = spec.id ?? (spec.type === 'supergroup' ? -1_001_000_000_000 - n : -4_000_000_000 - n);
    if (this.#chats.has(id)) throw new Error(`chat ${id} already exists: pick another id`);
    return this.#insertChat({
      id,
      type: spec.type,
      title: spec.title,
      isForum: spec.type === 'supergroup' && spec.isForum === true,
      botCanPin: spec.botCanPin ?? true,
    });
  }

  #insertChat(
    base: Omit<SandboxChat, 'topics' | 'pinned' | 'botCanPin'> & { botCanPin?: boolean },
  ): SandboxChat {
    const record: ChatRecord = {
      topics: [],
      pinned: [],
      botCanPin: true,
      ...base,
      messages: new Map(),
      actions: [],
      drafts: [],
      // In a forum, thread id 1 is the General topic, so no topic may be created with that id.
      nextMessageId: base.isForum ? 2 : 1,
    };
    this.#chats.set(record.id, record);
    const chat = this.#snapshotChat(record);
    this.#hub.emit({ type: 'chat', chat });
    return chat;
  }

  /** Changes whether the bot may pin in a group. */
  setBotCanPin(chatId: number, canPin: boolean): void {
    const chat = this.#require(chatId);
    chat.botCanPin = chat.type === 'private' ? true : canPin;
    this.#hub.emit({ type: 'chat', chat: this.#snapshotChat(chat) });
  }

  /** Opens a forum topic with its creation service message; returns the topic. */
  addTopic(chatId: number, name: string, creator: WireUser): SandboxTopic {
    const chat = this.#require(chatId);
    if (!chat.isForum) throw new Error(`chat ${chatId} is not a forum: create it with forum: true`);
    const created = this.addMessage(chatId, {
      from: 'user',
      sender: creator,
      kind: 'service',
      text: '',
      entities: [],
      threadId: chat.nextMessageId,
      service: { type: 'forum_topic_created', name },
    });
    const topic = { threadId: created.messageId, name };
    chat.topics.push(topic);
    this.#hub.emit({ type: 'chat', chat: this.#snapshotChat(chat) });
    return { ...topic };
  }

  /** Whether a chat exists. */
  hasChat(chatId: number): boolean {
    return this.#chats.has(chatId);
  }

  /** A chat's settings and pins. */
  chat(chatId: number): SandboxChat | undefined {
    const chat = this.#chats.get(chatId);
    return chat && this.#snapshotChat(chat);
  }

  /** Every chat, in creation order. */
  chats(): SandboxChat[] {
    return [...this.#chats.values()].map((c) => this.#snapshotChat(c));
  }

  #snapshotChat(chat: ChatRecord): SandboxChat {
    const { messages: _m, actions: _a, drafts: _d, nextMessageId: _n, ...settings } = chat;
    return clone(settings);
  }

  #require(chatId: number): ChatRecord {
    const chat = this.#chats.get(chatId);
    if (!chat) throw new Error(`no chat ${chatId} in the sandbox: create it first`);
    return chat;
  }

  // --- messages --------------------------------------------------------------------------------

  /**
   * Appends a message and returns the live record (callers inside the server may read it; everything
   * handed outside is a snapshot). Emits `message`.
   */
  addMessage(chatId: number, input: NewMessage): SandboxMessage {
    const chat = this.#require(chatId);
    const at = this.#now();
    const version: MessageVersion = {
      text: input.text,
      entities: input.entities,
      html: renderTelegramHtml(input.text, input.entities),
      at,
      ...(input.replyMarkup ? { replyMarkup: input.replyMarkup } : {}),
    };
    const message: SandboxMessage = {
      chatId,
      messageId: chat.nextMessageId++,
      from: input.from,
      sender: input.sender,
      kind: input.kind,
      text: version.text,
      entities: version.entities,
      html: version.html,
      history: [version],
      date: at,
      deleted: false,
      pinned: false,
      reactions: [],
      silent: input.silent === true,
      ...(input.threadId !== undefined ? { threadId: input.threadId } : {}),
      ...(input.replyMarkup ? { replyMarkup: input.replyMarkup } : {}),
      ...(input.replyToMessageId !== undefined ? { replyToMessageId: input.replyToMessageId } : {}),
      ...(input.file ? { file: input.file } : {}),
      ...(input.service ? { service: input.service } : {}),
    };
    chat.messages.set(message.messageId, message);
    this.#hub.emit({ type: 'message', message: clone(message) });
    return message;
  }

  /** The live record of a message (deleted ones included). */
  message(chatId: number, messageId: number): SandboxMessage | undefined {
    return this.#chats.get(chatId)?.messages.get(messageId);
  }

  /** Snapshots of a chat's messages in id order, optionally one topic's (`threadId` 0 for General). */
  messages(chatId: number, options: { threadId?: number; includeDeleted?: boolean } = {}): SandboxMessage[] {
    const chat = this.#chats.get(chatId);
    if (!chat) return [];
    const out: SandboxMessage[] = [];
    for (const m of chat.messages.values()) {
      if (!options.includeDeleted && m.deleted) continue;
      if (options.threadId !== undefined && (m.threadId ?? 0) !== options.threadId) continue;
      out.push(clone(m));
    }
    return out;
  }

  /** Replaces a message's visible content, keeping the old version in its history. Emits `edit`. */
  editMessage(message: SandboxMessage, content: MessageContent): void {
    const at = this.#now();
    const version: MessageVersion = {
      text: content.text,
      entities: content.entities,
      html: renderTelegramHtml(content.text, content.entities),
      at,
      ...(content.replyMarkup ? { replyMarkup: content.replyMarkup } : {}),
    };
    message.history.push(version);
    message.text = version.text;
    message.entities = version.entities;
    message.html = version.html;
    if (version.replyMarkup) message.replyMarkup = version.replyMarkup;
    else delete message.replyMarkup;
    message.editedAt = at;
    this.#hub.emit({ type: 'edit', message: clone(message) });
  }

  /** Marks a message deleted (and unpins it, as Telegram does). Emits `delete`. */
  deleteMessage(message: SandboxMessage): void {
    message.deleted = true;
    message.deletedAt = this.#now();
    const chat = this.#require(message.chatId);
    if (message.pinned)
      this.#setPinned(
        chat,
        chat.pinned.filter((id) => id !== message.messageId),
      );
    this.#hub.emit({ type: 'delete', message: clone(message) });
  }

  /** Replaces the bot's reactions on a message. Emits `reaction`. */
  setReactions(message: SandboxMessage, emoji: string[]): void {
    message.reactions = [...emoji];
    this.#hub.emit({ type: 'reaction', message: clone(message) });
  }

  // --- pins ------------------------------------------------------------------------------------

  /** Pins a message (moving it to the top if already pinned). */
  pin(message: SandboxMessage): void {
    const chat = this.#require(message.chatId);
    this.#setPinned(chat, [...chat.pinned.filter((id) => id !== message.messageId), message.messageId]);
  }

  /** Unpins one message; false when it was not pinned. */
  unpin(chatId: number, messageId: number): boolean {
    const chat = this.#require(chatId);
    if (!chat.pinned.includes(messageId)) return false;
    this.#setPinned(
      chat,
      chat.pinned.filter((id) => id !== messageId),
    );
    return true;
  }

  /** Unpins everything. */
  unpinAll(chatId: number): void {
    this.#setPinned(this.#require(chatId), []);
  }

  #setPinned(chat: ChatRecord, pinned: number[]): void {
    for (const id of chat.pinned) {
      const m = chat.messages.get(id);
      if (m) m.pinned = false;
    }
    for (const id of pinned) {
      const m = chat.messages.get(id);
      if (m) m.pinned = true;
    }
    chat.pinned = pinned;
    this.#hub.emit({ type: 'pins', chatId: chat.id, pinned: [...pinned] });
  }

  // --- actions and drafts ----------------------------------------------------------------------

  /** Records a chat action. Emits `action`. */
  recordAction(chatId: number, action: string, threadId?: number): ChatActionRecord {
    const record: ChatActionRecord = {
      chatId,
      action,
      at: this.#now(),
      ...(threadId !== undefined ? { threadId } : {}),
    };
    this.#require(chatId).actions.push(record);
    this.#hub.emit({ type: 'action', action: { ...record } });
    return record;
  }

  /** Chat actions sent to a chat, oldest first. */
  actions(chatId: number): ChatActionRecord[] {
    return this.#chats.get(chatId)?.actions.map((a) => ({ ...a })) ?? [];
  }

  /** Records a draft. Emits `draft`. */
  recordDraft(draft: Omit<DraftRecord, 'at' | 'html'>): DraftRecord {
    const record: DraftRecord = {
      ...draft,
      html: renderTelegramHtml(draft.text, draft.entities),
      at: this.#now(),
    };
    this.#require(draft.chatId).drafts.push(record);
    this.#hub.emit({ type: 'draft', draft: clone(record) });
    return record;
  }

  /** Drafts sent to a chat, oldest first. */
  drafts(chatId: number): DraftRecord[] {
    return this.#chats.get(chatId)?.drafts.map(clone) ?? [];
  }

  // --- callback queries ------------------------------------------------------------------------

  /** Records a button press and returns it (the id is new). Emits `callback_query`. */
  addCallbackQuery(query: Omit<CallbackQueryRecord, 'id' | 'at' | 'answer'>): CallbackQueryRecord {
    const id = `${Date.now().toString(36)}${(this.#nextQuery++).toString(36)}`;
    const record: CallbackQueryRecord = { ...query, id, at: this.#now() };
    this.#queries.set(id, record);
    this.#hub.emit({ type: 'callback_query', query: clone(record) });
    return clone(record);
  }

  /** A callback query by id. */
  callbackQuery(id: string): CallbackQueryRecord | undefined {
    const query = this.#queries.get(id);
    return query && clone(query);
  }

  /** Stores the bot's answer. Emits `callback_answer`. */
  answerCallbackQuery(id: string, answer: Omit<CallbackAnswer, 'at'>): void {
    const query = this.#queries.get(id);
    if (!query) return;
    query.answer = { ...answer, at: this.#now() };
    this.#hub.emit({ type: 'callback_answer', query: clone(query) });
  }

  // --- files -----------------------------------------------------------------------------------

  /**
   * Stores file content and returns its record (with a fresh `file_id` and path). A photo also gets a
   * thumbnail entry (same bytes, nominal smaller size), so `Message.photo` has more than one size.
   */
  addFile(
    bytes: Uint8Array,
    meta: {
      folder: 'photos' | 'documents';
      fileName?: string;
      mimeType?: string;
      width?: number;
      height?: number;
    },
  ): StoredFile {
    const file = this.#storeFile(bytes, meta);
    if (meta.folder === 'photos') {
      const thumbnail = this.#storeFile(bytes, { folder: 'photos' });
      file.thumbnailFileId = thumbnail.fileId;
    }
    return file;
  }

  #storeFile(
    bytes: Uint8Array,
    meta: {
      folder: 'photos' | 'documents';
      fileName?: string;
      mimeType?: string;
      width?: number;
      height?: number;
    },
  ): StoredFile {
    const n = this.#nextFile++;
    const extension =
      /\.([A-Za-z0-9]{1,8})$/.exec(meta.fileName ?? '')?.[1] ?? (meta.folder === 'photos' ? 'jpg' : 'dat');
    const file: StoredFile = {
      fileId: `${meta.folder === 'photos' ? 'AgAC' : 'BQAC'}${randomBytes(12).toString('base64url')}${n}`,
      fileUniqueId: `AQAD${n.toString(36)}${randomBytes(3).toString('hex')}`,
      filePath: `${meta.folder}/file_${n}.${extension}`,
      size: bytes.byteLength,
      bytes,
      ...(meta.fileName !== undefined ? { fileName: meta.fileName } : {}),
      ...(meta.mimeType !== undefined ? { mimeType: meta.mimeType } : {}),
      ...(meta.width !== undefined ? { width: meta.width } : {}),
      ...(meta.height !== undefined ? { height: meta.height } : {}),
    };
    this.#files.set(file.fileId, file);
    this.#filesByPath.set(file.filePath, file);
    return file;
  }

  /** A file by `file_id`. */
  file(fileId: string): StoredFile | undefined {
    return this.#files.get(fileId);
  }

  /** A file by its download path. */
  fileByPath(path: string): StoredFile | undefined {
    return this.#filesByPath.get(path);
  }

  // --- commands --------------------------------------------------------------------------------

  /** Replaces the command list for a scope key (scope type, chat, language). Emits `commands`. */
  setCommands(scope: string, commands: WireBotCommand[]): void {
    if (commands.length === 0) this.#commands.delete(scope);
    else this.#commands.set(scope, clone(commands));
    this.#hub.emit({ type: 'commands', scope, commands: clone(commands) });
  }

  /** The command list for a scope key (empty when none). */
  commands(scope: string): WireBotCommand[] {
    return clone(this.#commands.get(scope) ?? []);
  }
}
