/**
 * The Bot API methods that create or change messages: sending text, photos and documents, editing,
 * deleting, drafts, chat actions and reactions. Each validates like Telegram (in Telegram's order:
 * chat, target message, content), spends a rate-limit token for sends and edits, and then changes the
 * store.
 */
import { BotApiError, refuse } from './api-error.js';
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
import type { SandboxMessage } from './records.js';
import type { RequestParams } from './request-params.js';
import { toWireMessage } from './wire-format.js';

/** Chat actions Telegram accepts. */
const CHAT_ACTIONS = new Set([
  'typing',
  'upload_photo',
  'record_video',
  'upload_video',
  'record_voice',
  'upload_voice',
  'upload_document',
  'choose_sticker',
  'find_location',
  'record_video_note',
  'upload_video_note',
]);

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
  });
  return toWireMessage(ctx.store, message);
};

/** The file of a sendPhoto/sendDocument: an upload is stored, a `file_id` reused. */
function inputFile(params: RequestParams, ctx: MethodContext, field: 'photo' | 'document'): StoredFile {
  const input = params.file(field);
  if (input === undefined) throw new BotApiError(400, `Bad Request: there is no ${field} in the request`);
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
    const file = inputFile(params, ctx, field);
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

/** Omitting `reply_markup` in an edit removes the keyboard, as in Telegram. */
const editMessageText: MethodHandler = (params, ctx) => {
  const message = editableMessage(params, ctx);
  if (message.kind !== 'text') throw refuse('noTextToEdit');
  return applyEdit(ctx, message, messageText(params), inlineKeyboard(params.json('reply_markup')));
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

/** Bot API 9.5: streams a draft to a private chat; the sandbox records every call. */
const sendMessageDraft: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  if (chat.type !== 'private') throw refuse('draftOnlyPrivate');
  const draftId = params.int('draft_id');
  if (draftId === 0) throw refuse('draftIdInvalid');
  const formatted = formatText(
    params.optStr('text') ?? '',
    params.optStr('parse_mode'),
    params.json('entities'),
  );
  checkLength(formatted, TEXT_LIMITS.message, { tooLong: refuse('messageTooLong') });
  const threadId = params.optInt('message_thread_id');
  ctx.store.recordDraft({
    chatId: chat.id,
    draftId,
    ...formatted,
    ...(threadId !== undefined ? { threadId } : {}),
  });
  return true;
};

const sendChatAction: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const action = params.str('action');
  if (!CHAT_ACTIONS.has(action)) throw refuse('wrongAction');
  ctx.store.recordAction(chat.id, action, resolveThread(chat, params));
  return true;
};

/** Reactions are accepted and recorded on the message; only emoji reactions are kept. */
const setMessageReaction: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const message = liveMessage(ctx, chat.id, params.int('message_id'));
  if (!message) throw new BotApiError(400, 'Bad Request: message to react not found');
  const reaction = params.json('reaction');
  const emoji = Array.isArray(reaction)
    ? reaction.flatMap((r: unknown) =>
        typeof r === 'object' && r !== null && typeof (r as { emoji?: unknown }).emoji === 'string'
          ? [(r as { emoji: string }).emoji]
          : [],
      )
    : [];
  ctx.store.setReactions(message, emoji);
  return true;
};

/** The message methods, by Telegram's spelling. */
export const MESSAGE_METHODS = {
  sendMessage,
  sendPhoto: sendMedia('photo'),
  sendDocument: sendMedia('document'),
  editMessageText,
  editMessageCaption,
  editMessageReplyMarkup,
  deleteMessage,
  deleteMessages,
  sendMessageDraft,
  sendChatAction,
  setMessageReaction,
} as const satisfies Record<string, MethodHandler>;
