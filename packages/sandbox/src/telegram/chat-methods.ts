/**
 * The Bot API methods about the bot, its updates and its chats: identity, long polling and webhooks,
 * pins, chat info, callback query answers, commands and file metadata.
 */
import { BotApiError, refuse } from './api-error.js';
import { liveMessage, type MethodHandler, requireChat, requirePinRights } from './method-context.js';
import type { RequestParams } from './request-params.js';
import type { WireBotCommand, WireFile } from './wire.js';
import { toWireChatFullInfo } from './wire-format.js';

const getMe: MethodHandler = (_params, ctx) => ({ ...ctx.bot });

const getUpdates: MethodHandler = (params, ctx) => {
  const allowed = params.json('allowed_updates');
  return ctx.updates.poll(
    {
      offset: params.optInt('offset'),
      limit: params.optInt('limit'),
      timeout: params.optInt('timeout'),
      allowedUpdates: Array.isArray(allowed) ? allowed.map(String) : undefined,
    },
    ctx.signal,
  );
};

const setWebhook: MethodHandler = (params, ctx) => {
  ctx.updates.webhookUrl = params.str('url');
  if (params.bool('drop_pending_updates')) ctx.updates.dropPending();
  return true;
};

const deleteWebhook: MethodHandler = (params, ctx) => {
  ctx.updates.webhookUrl = '';
  if (params.bool('drop_pending_updates')) ctx.updates.dropPending();
  return true;
};

const getWebhookInfo: MethodHandler = (_params, ctx) => ({
  url: ctx.updates.webhookUrl,
  has_custom_certificate: false,
  pending_update_count: ctx.updates.pending().length,
});

/**
 * Pins silently or not (`disable_notification`); either way a "pinned" service message appears in the
 * chat, as it does in Telegram. Pins do not spend rate-limit tokens (Telegram documents no such limit).
 */
const pinChatMessage: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  requirePinRights(chat);
  const message = liveMessage(ctx, chat.id, params.int('message_id'));
  if (!message) throw refuse('messageToPinNotFound');
  ctx.store.pin(message);
  ctx.store.addMessage(chat.id, {
    from: 'bot',
    sender: ctx.bot,
    kind: 'service',
    text: '',
    entities: [],
    threadId: message.threadId,
    service: { type: 'pinned_message', messageId: message.messageId },
    silent: params.bool('disable_notification'),
  });
  return true;
};

/** Without `message_id`, unpins the most recent pin. A message that is not pinned is "not found". */
const unpinChatMessage: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  requirePinRights(chat);
  const messageId = params.optInt('message_id') ?? chat.pinned.at(-1);
  if (messageId === undefined || !ctx.store.unpin(chat.id, messageId)) throw refuse('messageToUnpinNotFound');
  return true;
};

const unpinAllChatMessages: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  requirePinRights(chat);
  ctx.store.unpinAll(chat.id);
  return true;
};

const getChat: MethodHandler = (params, ctx) => toWireChatFullInfo(ctx.store, requireChat(params, ctx));

/** Enough of `ChatMember` to tell whether the bot is an admin that may pin. */
const getChatMember: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const userId = params.int('user_id');
  if (userId === ctx.bot.id) {
    if (chat.type === 'private') return { status: 'member', user: { ...ctx.bot } };
    return {
      status: 'administrator',
      user: { ...ctx.bot },
      can_be_edited: false,
      is_anonymous: false,
      can_manage_chat: true,
      can_delete_messages: true,
      can_manage_video_chats: false,
      can_restrict_members: false,
      can_promote_members: false,
      can_change_info: false,
      can_invite_users: true,
      can_post_stories: false,
      can_edit_stories: false,
      can_delete_stories: false,
      can_pin_messages: chat.botCanPin,
      ...(chat.isForum ? { can_manage_topics: true } : {}),
    };
  }
  const user = ctx.store.user(userId);
  if (!user) throw new BotApiError(400, 'Bad Request: user not found');
  return { status: 'member', user };
};

const answerCallbackQuery: MethodHandler = (params, ctx) => {
  const id = params.str('callback_query_id');
  const query = ctx.store.queries.get(id);
  if (!query || query.answer || ctx.now() - query.at > ctx.callbackQueryTtlMs) throw refuse('queryTooOld');
  const text = params.optStr('text');
  const url = params.optStr('url');
  ctx.store.queries.answer(id, {
    showAlert: params.bool('show_alert'),
    ...(text !== undefined ? { text } : {}),
    ...(url !== undefined ? { url } : {}),
  });
  return true;
};

/** Commands are kept per scope and language, as Telegram keeps them. */
function commandScopeKey(params: RequestParams): string {
  const scope = params.json('scope') as Record<string, unknown> | undefined;
  const parts = [String(scope?.type ?? 'default')];
  if (scope?.chat_id !== undefined) parts.push(`chat=${String(scope.chat_id)}`);
  if (scope?.user_id !== undefined) parts.push(`user=${String(scope.user_id)}`);
  const language = params.optStr('language_code');
  if (language) parts.push(`lang=${language}`);
  return parts.join(';');
}

const setMyCommands: MethodHandler = (params, ctx) => {
  const commands = params.json('commands');
  if (!Array.isArray(commands)) throw new BotApiError(400, 'Bad Request: commands is empty');
  if (commands.length > 100) throw new BotApiError(400, 'Bad Request: too many commands');
  const checked: WireBotCommand[] = commands.map((c: unknown) => {
    const { command, description } = (c ?? {}) as Partial<WireBotCommand>;
    if (typeof command !== 'string' || !/^[a-z0-9_]{1,32}$/.test(command)) throw refuse('botCommandInvalid');
    if (typeof description !== 'string' || description.trim().length === 0 || description.length > 256) {
      throw refuse('botCommandDescriptionInvalid');
    }
    return { command, description };
  });
  ctx.store.botCommands.set(commandScopeKey(params), checked);
  return true;
};

const getMyCommands: MethodHandler = (params, ctx) => ctx.store.botCommands.get(commandScopeKey(params));

const deleteMyCommands: MethodHandler = (params, ctx) => {
  ctx.store.botCommands.set(commandScopeKey(params), []);
  return true;
};

const getFile: MethodHandler = (params, ctx) => {
  const file = ctx.store.files.get(params.str('file_id'));
  if (!file) throw refuse('invalidFileId');
  if (file.size > ctx.maxDownloadBytes) throw refuse('fileTooBig');
  const result: WireFile = {
    file_id: file.fileId,
    file_unique_id: file.fileUniqueId,
    file_size: file.size,
    file_path: file.filePath,
  };
  return result;
};

/** Telegram's topic icon colours; a topic created without `icon_color` gets the first. */
const TOPIC_COLORS = [0x6fb9f0, 0xffd67e, 0xcb86db, 0x8eee98, 0xff93b2, 0xfb6f5f];

/**
 * A topic in a forum supergroup, or (Bot API 9.3) in a private chat whose bot has topic mode
 * (`has_topics_enabled`); anywhere else "the chat is not a forum", as Telegram answers. The name is
 * 1–128 characters. The topic opens with its creation service message, sent by the bot.
 */
const createForumTopic: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const topics = chat.type === 'private' ? ctx.bot.has_topics_enabled : chat.isForum;
  if (!topics) throw refuse('notAForum');
  const name = params.optStr('name') ?? '';
  if (name.trim().length === 0 || [...name].length > 128) throw refuse('topicNameInvalid');
  const asked = params.optInt('icon_color');
  const color = asked !== undefined && TOPIC_COLORS.includes(asked) ? asked : 0x6fb9f0;
  const topic = ctx.store.addTopic(chat.id, name, ctx.bot, 'bot');
  return { message_thread_id: topic.threadId, name: topic.name, icon_color: color };
};

const alwaysTrue: MethodHandler = () => true;

/** The chat, update and bot methods, by Telegram's spelling. */
export const CHAT_METHODS = {
  getMe,
  getUpdates,
  setWebhook,
  deleteWebhook,
  getWebhookInfo,
  logOut: alwaysTrue,
  close: alwaysTrue,
  pinChatMessage,
  unpinChatMessage,
  unpinAllChatMessages,
  getChat,
  getChatMember,
  answerCallbackQuery,
  setMyCommands,
  getMyCommands,
  deleteMyCommands,
  getFile,
  createForumTopic,
} as const satisfies Record<string, MethodHandler>;
