/**
 * The sandbox's world: users, chats, forum topics, every message with its edit history, pins, chat
 * actions, drafts, and (in stores of their own it holds) files, callback queries and bot commands. It is
 * the single owner of that state; the Bot API methods and the test control API both change it only
 * through this class, which emits a {@link SandboxEvent} for every visible change. No I/O and no timers:
 * time comes from the injected clock.
 *
 * It is longer than 400 lines because it is one thing: the record of each chat (its messages, pins,
 * actions, drafts and stop presses) and the changes to it. They share that record and its rules (the
 * bot's next message ends the draft shown in its topic; deleting a message unpins it), which a split
 * would spread over files that reach into each other's maps.
 */
import { BotCommands } from './bot-commands.js';
import { CallbackQueries } from './callback-queries.js';
import type { EventHub } from './events.js';
import { FileStore } from './file-store.js';
import { renderTelegramHtml } from './html.js';
import type {
  ChatActionRecord,
  DraftRecord,
  DraftStopRecord,
  MessageVersion,
  SandboxChat,
  SandboxFileRef,
  SandboxMessage,
  SandboxTopic,
  ServiceAction,
} from './records.js';
import type { WireInlineKeyboardMarkup, WireMessageEntity, WireUser } from './wire.js';

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
  mediaGroupId?: string | undefined;
  rich?: { html: string } | undefined;
  ephemeral?: SandboxMessage['ephemeral'] | undefined;
}

/** The new visible content of an edited message. */
export interface MessageContent {
  text: string;
  entities: WireMessageEntity[];
  replyMarkup?: WireInlineKeyboardMarkup | undefined;
  /** A rich message: `text` is Markdown, shown as this HTML (see `rich-message.ts`). */
  rich?: { html: string } | undefined;
}

/** How to create a chat. */
export type ChatSpec =
  | { type: 'private'; user: WireUser }
  | {
      type: 'group' | 'supergroup';
      title: string;
      isForum?: boolean;
      botCanPin?: boolean;
      id?: number;
      availableReactions?: string[];
    };

interface ChatRecord extends SandboxChat {
  messages: Map<number, SandboxMessage>;
  actions: ChatActionRecord[];
  drafts: DraftRecord[];
  stops: DraftStopRecord[];
  nextMessageId: number;
}

const clone = <T>(value: T): T => structuredClone(value);

/** The sandbox's state. See the file comment for the ownership rule. */
export class ChatStore {
  /** Every file sent in any chat. */
  readonly files = new FileStore();
  /** The users' presses of inline buttons and the bot's answers. */
  readonly queries: CallbackQueries;
  /** The bot's command lists (`setMyCommands`). */
  readonly botCommands: BotCommands;
  readonly #hub: EventHub;
  readonly #now: () => number;
  readonly #users = new Map<number, WireUser>();
  readonly #chats = new Map<number, ChatRecord>();
  #nextGroupId = 1;

  constructor(hub: EventHub, now: () => number) {
    this.#hub = hub;
    this.#now = now;
    this.queries = new CallbackQueries(hub, now);
    this.botCommands = new BotCommands(hub);
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
      ...(spec.availableReactions ? { availableReactions: [...spec.availableReactions] } : {}),
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
      stops: [],
      // In a forum, thread id 1 is the General topic, so no topic may be created with that id.
      nextMessageId: base.isForum ? 2 : 1,
    };
    this.#chats.set(record.id, record);
    const chat = this.#snapshotChat(record);
    this.#hub.emit({ type: 'chat', chat });
    return chat;
  }

  /** Changes the reactions a chat allows (undefined: all of them). */
  setAvailableReactions(chatId: number, emoji: string[] | undefined): void {
    const chat = this.#require(chatId);
    chat.availableReactions = emoji === undefined ? undefined : [...emoji];
    this.#hub.emit({ type: 'chat', chat: this.#snapshotChat(chat) });
  }

  /** Changes whether the bot may pin in a group. */
  setBotCanPin(chatId: number, canPin: boolean): void {
    const chat = this.#require(chatId);
    chat.botCanPin = chat.type === 'private' ? true : canPin;
    this.#hub.emit({ type: 'chat', chat: this.#snapshotChat(chat) });
  }

  /**
   * Opens a topic — of a forum, or of a private chat (whether the bot has private topics is the
   * caller's check) — with its creation service message; returns the topic.
   */
  addTopic(chatId: number, name: string, creator: WireUser, from: 'user' | 'bot' = 'user'): SandboxTopic {
    const chat = this.#require(chatId);
    if (!chat.isForum && chat.type !== 'private')
      throw new Error(`chat ${chatId} is not a forum: create it with forum: true`);
    const created = this.addMessage(chatId, {
      from,
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
    const { messages: _m, actions: _a, drafts: _d, stops: _s, nextMessageId: _n, ...settings } = chat;
    return clone(settings);
  }

  #require(chatId: number): ChatRecord {
    const chat = this.#chats.get(chatId);
    if (!chat) throw new Error(`no chat ${chatId} in the sandbox: create it first`);
    return chat;
  }

  /** A message's visible content as of now, with its HTML form; what a new or edited message shows. */
  #version(content: MessageContent): MessageVersion {
    return {
      text: content.text,
      entities: content.entities,
      html: content.rich ? content.rich.html : renderTelegramHtml(content.text, content.entities),
      ...(content.rich ? { rich: true as const } : {}),
      at: this.#now(),
      ...(content.replyMarkup ? { replyMarkup: content.replyMarkup } : {}),
    };
  }

  // --- messages --------------------------------------------------------------------------------

  /**
   * Appends a message and returns the live record (callers inside the server may read it; everything
   * handed outside is a snapshot). Emits `message`.
   */
  addMessage(chatId: number, input: NewMessage): SandboxMessage {
    const chat = this.#require(chatId);
    const version = this.#version(input);
    const message: SandboxMessage = {
      chatId,
      messageId: chat.nextMessageId++,
      from: input.from,
      sender: input.sender,
      kind: input.kind,
      text: version.text,
      entities: version.entities,
      html: version.html,
      ...(version.rich ? { rich: true as const } : {}),
      history: [version],
      date: version.at,
      deleted: false,
      pinned: false,
      reactions: [],
      silent: input.silent === true,
      ...(input.threadId !== undefined ? { threadId: input.threadId } : {}),
      ...(input.replyMarkup ? { replyMarkup: input.replyMarkup } : {}),
      ...(input.replyToMessageId !== undefined ? { replyToMessageId: input.replyToMessageId } : {}),
      ...(input.file ? { file: input.file } : {}),
      ...(input.service ? { service: input.service } : {}),
      ...(input.mediaGroupId !== undefined ? { mediaGroupId: input.mediaGroupId } : {}),
      ...(input.ephemeral ? { ephemeral: input.ephemeral } : {}),
    };
    chat.messages.set(message.messageId, message);
    // As in Telegram's clients, the bot's next message in the chat (in a topic: in that topic) ends the
    // draft shown there.
    const draft = chat.drafts.findLast((d) => d.threadId === input.threadId);
    if (input.from === 'bot' && draft && !draft.superseded) draft.superseded = true;
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
    const version = this.#version(content);
    message.history.push(version);
    message.text = version.text;
    message.entities = version.entities;
    message.html = version.html;
    if (version.rich) message.rich = true;
    else delete message.rich;
    if (version.replyMarkup) message.replyMarkup = version.replyMarkup;
    else delete message.replyMarkup;
    message.editedAt = version.at;
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
  recordDraft(draft: Omit<DraftRecord, 'at' | 'html'>, html?: string): DraftRecord {
    const record: DraftRecord = {
      ...draft,
      html: html ?? renderTelegramHtml(draft.text, draft.entities),
      at: this.#now(),
    };
    this.#require(draft.chatId).drafts.push(record);
    this.#hub.emit({ type: 'draft', draft: clone(record) });
    return record;
  }

  /**
   * Records a press of a draft's stop button: that draft (its last version) is stopped, and gone from
   * the chat unless it was sent with `keep_on_stop`. Emits `draft_stop`.
   */
  recordStop(stop: Omit<DraftStopRecord, 'at'>): DraftStopRecord {
    const record: DraftStopRecord = { ...stop, at: this.#now() };
    const chat = this.#require(stop.chatId);
    const draft = chat.drafts.findLast((d) => d.draftId === stop.draftId && d.threadId === stop.threadId);
    if (draft) {
      draft.stoppedAt = record.at;
      if (!draft.keepOnStop) draft.superseded = true;
    }
    chat.stops.push(record);
    this.#hub.emit({ type: 'draft_stop', stop: { ...record } });
    return record;
  }

  /** Stop presses in a chat, oldest first. */
  stops(chatId: number): DraftStopRecord[] {
    return this.#chats.get(chatId)?.stops.map((s) => ({ ...s })) ?? [];
  }

  /** Drafts sent to a chat, oldest first. */
  drafts(chatId: number): DraftRecord[] {
    return this.#chats.get(chatId)?.drafts.map(clone) ?? [];
  }
}
