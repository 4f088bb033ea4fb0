/**
 * What a Telegram user can do to the bot, as the sandbox's test and web-view entry points: send text,
 * photos, documents and voice notes (with captions), edit their own text, press inline buttons, pin and unpin. Each
 * action changes the store as the user's client would and queues the update the bot would receive.
 * These throw plain `Error`s on misuse (an unknown chat, a button that is not there): those are bugs in
 * the calling test, not Telegram behaviour.
 */
import type { ChatStore } from './chat-store.js';
import { isDisabledButton } from './newer-api.js';
import type {
  CallbackQueryRecord,
  DraftStopRecord,
  SandboxChat,
  SandboxFileRef,
  SandboxMessage,
} from './records.js';
import type { UpdateQueue } from './update-queue.js';
import type { WireMessageEntity, WireUser } from './wire.js';
import { toWireChat, toWireMessage } from './wire-format.js';

/** The parts of the server a user action needs. */
export interface UserActionContext {
  readonly store: ChatStore;
  readonly updates: UpdateQueue;
  readonly defaultUser: WireUser;
}

/** Options shared by everything a user sends. */
export interface SendOptions {
  /** The sender; default: the server's default user (in a private chat, always the chat's user). */
  from?: WireUser;
  /** Forum topic to send in; default General (or the replied-to message's topic). */
  threadId?: number;
  /** Message id this one replies to. */
  replyTo?: number;
}

/** A photo a user sends. */
export interface PhotoInput extends SendOptions {
  data: Uint8Array;
  caption?: string;
  width?: number;
  height?: number;
}

/** A document a user sends. */
export interface DocumentInput extends SendOptions {
  data: Uint8Array;
  fileName: string;
  mimeType?: string;
  caption?: string;
}

/** A voice note a user records (Telegram's clients send OGG/Opus). */
export interface VoiceInput extends SendOptions {
  data: Uint8Array;
  /** Its length in seconds, as the client reports it. */
  duration: number;
  /** Default `audio/ogg`. */
  mimeType?: string;
  caption?: string;
}

/** Which button to press: its `callback_data` (a string), or its label. */
export type ButtonSelector = string | { data: string } | { text: string };

/** `bot_command` entities for `/commands` in user text, as Telegram's clients mark them. */
export function commandEntities(text: string): WireMessageEntity[] {
  const entities: WireMessageEntity[] = [];
  for (const match of text.matchAll(
    /(^|\s)(\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?)(?=$|\s|[.,!?;:])/g,
  )) {
    const prefix = match[1] ?? '';
    const command = match[2] ?? '';
    entities.push({
      type: 'bot_command',
      offset: (match.index ?? 0) + prefix.length,
      length: command.length,
    });
  }
  return entities;
}

function chatOf(ctx: UserActionContext, chatId: number): SandboxChat {
  const chat = ctx.store.chat(chatId);
  if (!chat) throw new Error(`no chat ${chatId} in the sandbox: create it first`);
  return chat;
}

function senderOf(ctx: UserActionContext, chat: SandboxChat, from: WireUser | undefined): WireUser {
  if (chat.type === 'private' && chat.user) return chat.user;
  const sender = from ?? ctx.defaultUser;
  if (!ctx.store.user(sender.id)) ctx.store.addUser(sender);
  return sender;
}

function placement(ctx: UserActionContext, chat: SandboxChat, options: SendOptions) {
  let threadId = options.threadId;
  if (options.replyTo !== undefined) {
    const target = ctx.store.message(chat.id, options.replyTo);
    if (!target || target.deleted)
      throw new Error(`cannot reply to message ${options.replyTo}: it is not in chat ${chat.id}`);
    threadId ??= target.threadId;
  }
  if (threadId !== undefined && !chat.topics.some((t) => t.threadId === threadId)) {
    throw new Error(`chat ${chat.id} has no topic ${threadId}: create it with createTopic`);
  }
  return { threadId, replyToMessageId: options.replyTo };
}

/**
 * Adds a user's message (text, or a file's caption, with its `bot_command` entities) where `options`
 * place it, and queues the `message` update. Every user send goes through here.
 */
function send(
  ctx: UserActionContext,
  chat: SandboxChat,
  kind: Exclude<SandboxMessage['kind'], 'service'>,
  text: string,
  options: SendOptions,
  file?: SandboxFileRef,
): SandboxMessage {
  const message = ctx.store.addMessage(chat.id, {
    from: 'user',
    sender: senderOf(ctx, chat, options.from),
    kind,
    text,
    entities: commandEntities(text),
    ...(file ? { file } : {}),
    ...placement(ctx, chat, options),
  });
  return deliver(ctx, message);
}

function deliver(ctx: UserActionContext, message: SandboxMessage): SandboxMessage {
  ctx.updates.push('message', { message: toWireMessage(ctx.store, message) });
  return structuredClone(message);
}

/** The user sends a text message; commands get `bot_command` entities. */
export function userSendsText(
  ctx: UserActionContext,
  chatId: number,
  text: string,
  options: SendOptions = {},
): SandboxMessage {
  if (text.trim() === '') throw new Error('a Telegram user cannot send an empty message');
  return send(ctx, chatOf(ctx, chatId), 'text', text, options);
}

/** The user sends a photo, optionally captioned; the bot sees a thumbnail and the full size. */
export function userSendsPhoto(ctx: UserActionContext, chatId: number, photo: PhotoInput): SandboxMessage {
  const chat = chatOf(ctx, chatId);
  const file = ctx.store.files.add(photo.data, {
    folder: 'photos',
    ...(photo.width !== undefined ? { width: photo.width } : {}),
    ...(photo.height !== undefined ? { height: photo.height } : {}),
  });
  return send(ctx, chat, 'photo', photo.caption ?? '', photo, {
    fileId: file.fileId,
    fileUniqueId: file.fileUniqueId,
    size: file.size,
  });
}

/** The user sends a document, optionally captioned. */
export function userSendsDocument(
  ctx: UserActionContext,
  chatId: number,
  doc: DocumentInput,
): SandboxMessage {
  const chat = chatOf(ctx, chatId);
  const file = ctx.store.files.add(doc.data, {
    folder: 'documents',
    fileName: doc.fileName,
    ...(doc.mimeType !== undefined ? { mimeType: doc.mimeType } : {}),
  });
  return send(ctx, chat, 'document', doc.caption ?? '', doc, {
    fileId: file.fileId,
    fileUniqueId: file.fileUniqueId,
    size: file.size,
    fileName: doc.fileName,
    ...(doc.mimeType !== undefined ? { mimeType: doc.mimeType } : {}),
  });
}

/** The user sends a voice note; the bot sees `voice` with its duration, MIME type and `file_id`. */
export function userSendsVoice(ctx: UserActionContext, chatId: number, voice: VoiceInput): SandboxMessage {
  const chat = chatOf(ctx, chatId);
  if (!Number.isInteger(voice.duration) || voice.duration < 0) {
    throw new Error(`a voice note's duration is whole seconds, not ${voice.duration}`);
  }
  const mimeType = voice.mimeType ?? 'audio/ogg';
  const file = ctx.store.files.add(voice.data, { folder: 'voice', mimeType, duration: voice.duration });
  return send(ctx, chat, 'voice', voice.caption ?? '', voice, {
    fileId: file.fileId,
    fileUniqueId: file.fileUniqueId,
    size: file.size,
    mimeType,
    duration: voice.duration,
  });
}

/** The user edits the text of one of their own messages; the bot gets an `edited_message` update. */
export function userEditsText(
  ctx: UserActionContext,
  chatId: number,
  messageId: number,
  text: string,
): SandboxMessage {
  const message = ctx.store.message(chatId, messageId);
  if (!message || message.deleted || message.from !== 'user' || message.kind !== 'text') {
    throw new Error(`message ${messageId} in chat ${chatId} is not a live text message from a user`);
  }
  ctx.store.editMessage(message, { text, entities: commandEntities(text) });
  ctx.updates.push('edited_message', { edited_message: toWireMessage(ctx.store, message) });
  return structuredClone(message);
}

/**
 * The user presses an inline button on a bot message. The button must be on the message's current
 * keyboard unless `force` is set (to model a client showing a stale keyboard). Returns the query, whose
 * `answer` the bot sets later with `answerCallbackQuery`.
 */
export function userPressesButton(
  ctx: UserActionContext,
  chatId: number,
  messageId: number,
  button: ButtonSelector,
  options: { from?: WireUser; force?: boolean } = {},
): CallbackQueryRecord {
  const chat = chatOf(ctx, chatId);
  const message = ctx.store.message(chatId, messageId);
  if (!message || message.deleted)
    throw new Error(`no message ${messageId} in chat ${chatId} to press a button on`);
  const buttons = message.replyMarkup?.inline_keyboard.flat() ?? [];
  const wanted =
    typeof button === 'string'
      ? { data: button }
      : 'data' in button
        ? { data: button.data }
        : { text: button.text };
  const found = buttons.find((b) =>
    'data' in wanted ? b.callback_data === wanted.data : b.text === wanted.text,
  );
  if (found && isDisabledButton(found) && !options.force)
    throw new Error(
      `button ${JSON.stringify(found.text)} of message ${messageId} is disabled: it does nothing`,
    );
  let data = found?.callback_data;
  if (data === undefined) {
    if (options.force && 'data' in wanted) data = wanted.data;
    else {
      const labels = buttons.map((b) => `${b.text}=${b.callback_data ?? '(no data)'}`).join(', ') || 'none';
      throw new Error(
        `message ${messageId} has no callback button ${JSON.stringify(button)}; its buttons: ${labels}`,
      );
    }
  }
  const from = senderOf(ctx, chat, options.from);
  const query = ctx.store.queries.add({
    chatId,
    messageId,
    data,
    from,
    ...(message.threadId !== undefined ? { threadId: message.threadId } : {}),
  });
  ctx.updates.push('callback_query', {
    callback_query: {
      id: query.id,
      from: { ...from },
      message: toWireMessage(ctx.store, message),
      chat_instance: String(Math.abs(chatId) * 7919),
      data,
    },
  });
  return query;
}

/**
 * The user pins a message (a pin the bot's sweep must leave alone); the bot receives the `pinned_message`
 * service message, as in Telegram.
 */
export function userPins(ctx: UserActionContext, chatId: number, messageId: number, from?: WireUser): void {
  const chat = chatOf(ctx, chatId);
  const message = ctx.store.message(chatId, messageId);
  if (!message || message.deleted) throw new Error(`no message ${messageId} in chat ${chatId} to pin`);
  ctx.store.pin(message);
  const notice = ctx.store.addMessage(chatId, {
    from: 'user',
    sender: senderOf(ctx, chat, from),
    kind: 'service',
    text: '',
    entities: [],
    threadId: message.threadId,
    service: { type: 'pinned_message', messageId },
  });
  deliver(ctx, notice);
}

/** The user unpins a message; false when it was not pinned. */
export function userUnpins(ctx: UserActionContext, chatId: number, messageId: number): boolean {
  chatOf(ctx, chatId);
  return ctx.store.unpin(chatId, messageId);
}

/**
 * The user presses the stop button of the chat's live draft (one sent with `can_stop` in the last 30 s,
 * not yet replaced by a message of the bot); in a private chat with topics, the draft of topic
 * `threadId` (none: the chat's latest draft), replaced only by a bot message in that topic. The bot
 * receives `stopped_message_generation`. Throws when no such draft is shown.
 */
export function userStopsDraft(
  ctx: UserActionContext,
  chatId: number,
  now: number,
  threadId?: number,
): DraftStopRecord {
  const chat = chatOf(ctx, chatId);
  const drafts = ctx.store.drafts(chatId);
  const draft = threadId === undefined ? drafts.at(-1) : drafts.findLast((d) => d.threadId === threadId);
  const lastBot = ctx.store
    .messages(chatId)
    .filter((m) => m.from === 'bot' && m.threadId === draft?.threadId)
    .at(-1);
  const live =
    draft !== undefined &&
    now - draft.at < DRAFT_TTL_MS &&
    (lastBot === undefined || lastBot.date < draft.at);
  // A stopped draft (kept on screen by `keep_on_stop`, see `recordStop`) has no stop button any more.
  if (!draft || !live || !draft.canStop || draft.stoppedAt !== undefined)
    throw new Error(`chat ${chatId} shows no draft with a stop button (can_stop) to press`);
  const stop = ctx.store.recordStop({
    chatId,
    draftId: draft.draftId,
    ...(draft.threadId !== undefined ? { threadId: draft.threadId } : {}),
  });
  ctx.updates.push('stopped_message_generation', {
    stopped_message_generation: {
      chat: toWireChat(chat),
      draft_id: draft.draftId,
      ...(draft.threadId !== undefined ? { message_thread_id: draft.threadId } : {}),
    },
  });
  return stop;
}

/** A draft is a 30-second preview (Bot API). */
export const DRAFT_TTL_MS = 30_000;
