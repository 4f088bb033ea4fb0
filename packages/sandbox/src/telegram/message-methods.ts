/**
 * The Bot API methods that create or change messages: sending text, photos and documents, editing and
 * deleting (drafts, chat actions and reactions are `status-methods.ts`). Each validates like Telegram
 * (in Telegram's order: chat, target message, content), spends a rate-limit token for sends and edits,
 * and then changes the store.
 */
import { BotApiError, invalidParameter, refuse } from './api-error.js';
import type { StoredFile } from './file-store.js';
import {
  checkLength,
  type FormattedText,
  formatText,
  inlineKeyboard,
  sameContent,
  TEXT_LIMITS,
} from './message-content.js';
import {
  liveMessage,
  type MethodContext,
  type MethodHandler,
  replyTarget,
  requireChat,
  resolveThread,
  spendToken,
} from './method-context.js';
import { ephemeralTarget } from './newer-api.js';
import type { SandboxMessage } from './records.js';
import { RequestParams, type UploadedFile } from './request-params.js';
import { richContent } from './rich-message.js';
import { toWireMessage } from './wire-format.js';

function messageText(params: RequestParams): FormattedText {
  const formatted = formatText(
    params.str('text', refuse('messageTextEmpty')),
    params.optStr('parse_mode'),
    params.json('entities'),
  );
  checkLength(formatted, TEXT_LIMITS.message, {
    empty: refuse('messageTextEmpty'),
    tooLong: refuse('messageTooLong'),
  });
  return formatted;
}

function captionText(params: RequestParams): FormattedText {
  const formatted = formatText(
    params.optStr('caption') ?? '',
    params.optStr('parse_mode'),
    params.json('caption_entities'),
  );
  checkLength(formatted, TEXT_LIMITS.caption, { tooLong: refuse('captionTooLong') });
  return formatted;
}

const sendMessage: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const reply = replyTarget(params, ctx, chat);
  const threadId = resolveThread(chat, params) ?? reply?.threadId;
  const content = messageText(params);
  const replyMarkup = inlineKeyboard(params.json('reply_markup'));
  const ephemeral = ephemeralTarget(params, ctx.store, chat, ctx.lacks);
  spendToken(ctx, chat);
  const message = ctx.store.addMessage(chat.id, {
    from: 'bot',
    sender: ctx.bot,
    kind: 'text',
    ...content,
    threadId,
    replyMarkup,
    replyToMessageId: reply?.messageId,
    silent: params.bool('disable_notification'),
    ephemeral,
  });
  return toWireMessage(ctx.store, message);
};

/**
 * Bot API 10.1: a rich message (headings, lists, tables, code, quotes, details …) from Markdown, up to
 * 32,768 characters; refused like Telegram when its Markdown does not parse (see `rich-message.ts`).
 */
const sendRichMessage: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const reply = replyTarget(params, ctx, chat);
  const threadId = resolveThread(chat, params) ?? reply?.threadId;
  const rich = richContent(params.json('rich_message'));
  const replyMarkup = inlineKeyboard(params.json('reply_markup'));
  spendToken(ctx, chat);
  const message = ctx.store.addMessage(chat.id, {
    from: 'bot',
    sender: ctx.bot,
    kind: 'text',
    text: rich.markdown,
    entities: [],
    rich: { html: rich.html },
    threadId,
    replyMarkup,
    replyToMessageId: reply?.messageId,
    silent: params.bool('disable_notification'),
  });
  return toWireMessage(ctx.store, message);
};

/** Telegram's upload limits for bots: 10 MB for a photo, 50 MB for any other file. */
export const UPLOAD_LIMITS = { photo: 10 * 1024 * 1024, document: 50 * 1024 * 1024 } as const;

/**
 * The file of a sendPhoto/sendDocument (or an album item): an upload is stored, a `file_id` reused. An
 * upload over {@link UPLOAD_LIMITS} is refused as Telegram refuses it.
 */
function storeFile(
  input: UploadedFile | string | undefined,
  ctx: MethodContext,
  field: 'photo' | 'document',
): StoredFile {
  if (input === undefined) throw new BotApiError(400, `Bad Request: there is no ${field} in the request`);
  if (typeof input !== 'string' && input.data.byteLength > UPLOAD_LIMITS[field]) {
    throw refuse(field === 'photo' ? 'fileTooBig' : 'uploadTooLarge');
  }
  if (typeof input === 'string') {
    const existing = ctx.store.files.get(input);
    if (!existing) throw new BotApiError(400, 'Bad Request: wrong file identifier/HTTP URL specified');
    return existing;
  }
  return ctx.store.files.add(input.data, {
    folder: field === 'photo' ? 'photos' : 'documents',
    ...(input.filename !== undefined ? { fileName: input.filename } : {}),
    ...(input.contentType !== undefined && input.contentType !== 'application/octet-stream'
      ? { mimeType: input.contentType }
      : {}),
  });
}

function sendMedia(field: 'photo' | 'document'): MethodHandler {
  return (params, ctx) => {
    const chat = requireChat(params, ctx);
    const reply = replyTarget(params, ctx, chat);
    const threadId = resolveThread(chat, params) ?? reply?.threadId;
    const caption = captionText(params);
    const replyMarkup = inlineKeyboard(params.json('reply_markup'));
    const file = storeFile(params.file(field), ctx, field);
    spendToken(ctx, chat);
    const message = ctx.store.addMessage(chat.id, {
      from: 'bot',
      sender: ctx.bot,
      kind: field,
      ...caption,
      threadId,
      replyMarkup,
      replyToMessageId: reply?.messageId,
      silent: params.bool('disable_notification'),
      file: {
        fileId: file.fileId,
        fileUniqueId: file.fileUniqueId,
        size: file.size,
        ...(file.fileName !== undefined ? { fileName: file.fileName } : {}),
        ...(file.mimeType !== undefined ? { mimeType: file.mimeType } : {}),
      },
    });
    return toWireMessage(ctx.store, message);
  };
}

/**
 * An album: 2–10 photos, or 2–10 documents (Telegram does not mix documents with other media). Each item
 * is `{type, media, caption?, parse_mode?, caption_entities?}`; the messages share a `media_group_id`,
 * and each spends a rate-limit token, as separate sends do.
 */
const sendMediaGroup: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const reply = replyTarget(params, ctx, chat);
  const threadId = resolveThread(chat, params) ?? reply?.threadId;
  const media = params.json('media');
  if (!Array.isArray(media) || media.length < 2 || media.length > 10) throw refuse('mediaGroupSize');
  const items = media.map((raw: unknown) => {
    const item = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const type: 'photo' | 'document' | undefined =
      item.type === 'photo' ? 'photo' : item.type === 'document' ? 'document' : undefined;
    if (type === undefined) throw invalidParameter('media', 'unsupported media type');
    const caption = new RequestParams({
      caption: item.caption,
      parse_mode: item.parse_mode,
      caption_entities: item.caption_entities,
    });
    const ref = typeof item.media === 'string' ? item.media : undefined;
    return {
      type,
      caption: captionText(caption),
      input: ref === undefined ? undefined : params.attached(ref),
    };
  });
  if (items.some((i) => i.type === 'document') && items.some((i) => i.type !== 'document'))
    throw refuse('mediaGroupMixed');
  const files = items.map((item) => storeFile(item.input, ctx, item.type));
  const groupId = `${chat.id}${ctx.now()}${Math.floor(Math.random() * 1e6)}`;
  const messages = items.map((item, index) => {
    spendToken(ctx, chat);
    const file = files[index] as StoredFile;
    return ctx.store.addMessage(chat.id, {
      from: 'bot',
      sender: ctx.bot,
      kind: item.type,
      ...item.caption,
      threadId,
      replyToMessageId: reply?.messageId,
      silent: params.bool('disable_notification'),
      mediaGroupId: groupId,
      file: {
        fileId: file.fileId,
        fileUniqueId: file.fileUniqueId,
        size: file.size,
        ...(file.fileName !== undefined ? { fileName: file.fileName } : {}),
        ...(file.mimeType !== undefined ? { mimeType: file.mimeType } : {}),
      },
    });
  });
  return messages.map((message) => toWireMessage(ctx.store, message));
};

/** The bot's own live message named by chat_id + message_id, for editing. */
function editableMessage(params: RequestParams, ctx: MethodContext): SandboxMessage {
  if (params.has('inline_message_id'))
    throw new BotApiError(400, 'Bad Request: inline messages are not supported by the sandbox');
  const chat = requireChat(params, ctx);
  const message = liveMessage(ctx, chat.id, params.int('message_id'));
  if (!message) throw refuse('messageToEditNotFound');
  if (message.from !== 'bot' || message.kind === 'service') throw refuse('messageCantBeEdited');
  return message;
}

/** Applies an edit unless it changes nothing; returns the edited message. */
function applyEdit(
  ctx: MethodContext,
  message: SandboxMessage,
  content: FormattedText,
  replyMarkup: ReturnType<typeof inlineKeyboard>,
): unknown {
  const next = { ...content, replyMarkup };
  if (sameContent(message, next)) throw refuse('notModified');
  const chat = ctx.store.chat(message.chatId);
  if (chat) spendToken(ctx, chat);
  ctx.store.editMessage(message, next);
  return toWireMessage(ctx.store, message);
}

/**
 * Omitting `reply_markup` in an edit removes the keyboard, as in Telegram. With `rich_message` instead
 * of `text` (Bot API 10.1) the message becomes a rich message; "not modified" compares the Markdown.
 */
const editMessageText: MethodHandler = (params, ctx) => {
  const message = editableMessage(params, ctx);
  if (message.kind !== 'text') throw refuse('noTextToEdit');
  const replyMarkup = inlineKeyboard(params.json('reply_markup'));
  if (params.has('rich_message')) {
    const rich = richContent(params.json('rich_message'));
    if (message.rich && message.text === rich.markdown && sameContent(message, { ...message, replyMarkup }))
      throw refuse('notModified');
    const chat = ctx.store.chat(message.chatId);
    if (chat) spendToken(ctx, chat);
    ctx.store.editMessage(message, {
      text: rich.markdown,
      entities: [],
      replyMarkup,
      rich: { html: rich.html },
    });
    return toWireMessage(ctx.store, message);
  }
  const content = messageText(params);
  if (message.rich) {
    // A rich message edited back to text is a change even when the characters match.
    const chat = ctx.store.chat(message.chatId);
    if (chat) spendToken(ctx, chat);
    ctx.store.editMessage(message, { ...content, replyMarkup });
    return toWireMessage(ctx.store, message);
  }
  return applyEdit(ctx, message, content, replyMarkup);
};

const editMessageCaption: MethodHandler = (params, ctx) => {
  const message = editableMessage(params, ctx);
  if (message.kind === 'text') throw refuse('noCaptionToEdit');
  return applyEdit(ctx, message, captionText(params), inlineKeyboard(params.json('reply_markup')));
};

const editMessageReplyMarkup: MethodHandler = (params, ctx) => {
  const message = editableMessage(params, ctx);
  const content = { text: message.text, entities: message.entities };
  return applyEdit(ctx, message, content, inlineKeyboard(params.json('reply_markup')));
};

const deleteMessage: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const message = liveMessage(ctx, chat.id, params.int('message_id'));
  if (!message) throw refuse('messageToDeleteNotFound');
  ctx.store.deleteMessage(message);
  return true;
};

/** Deletes up to 100 messages; ones that are missing are skipped, as in Telegram. */
const deleteMessages: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const ids = params.json('message_ids');
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > 100) {
    throw new BotApiError(400, 'Bad Request: message_ids is empty or too long');
  }
  for (const id of ids) {
    const message = typeof id === 'number' ? liveMessage(ctx, chat.id, id) : undefined;
    if (message) ctx.store.deleteMessage(message);
  }
  return true;
};

/** The message methods, by Telegram's spelling. */
export const MESSAGE_METHODS = {
  sendMessage,
  sendPhoto: sendMedia('photo'),
  sendDocument: sendMedia('document'),
  sendMediaGroup,
  editMessageText,
  editMessageCaption,
  editMessageReplyMarkup,
  deleteMessage,
  deleteMessages,
  sendRichMessage,
} as const satisfies Record<string, MethodHandler>;
