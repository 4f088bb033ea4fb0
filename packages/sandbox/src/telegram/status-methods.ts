/**
 * The Bot API methods that show what a message or a chat is doing rather than add content: drafts
 * streamed while an answer is written, chat actions ("typing…") and reactions on a message. None of them
 * takes a message slot; drafts and reactions spend buckets of their own (see `rate-limiter.ts`).
 */
import { BotApiError, refuse } from './api-error.js';
import { checkLength, formatText, TEXT_LIMITS } from './message-content.js';
import { liveMessage, type MethodHandler, requireChat, resolveThread, spendToken } from './method-context.js';
import { keepsOnStop } from './newer-api.js';
import { richContent } from './rich-message.js';

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

/**
 * Bot API 9.5: streams a draft to a private chat (empty text: "Thinking…"); `can_stop` shows the user a
 * stop button, `keep_on_stop` (10.3) keeps the draft shown when it is pressed. Drafts spend the chat's
 * draft bucket (see `rate-limiter.ts`); the sandbox records every call.
 */
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
  const threadId = resolveThread(chat, params);
  spendToken(ctx, chat, 'draft');
  ctx.store.recordDraft({
    chatId: chat.id,
    draftId,
    ...formatted,
    canStop: params.bool('can_stop'),
    ...(keepsOnStop(params, ctx.lacks) ? { keepOnStop: true as const } : {}),
    ...(threadId !== undefined ? { threadId } : {}),
  });
  return true;
};

/** Bot API 10.1: a rich draft (Markdown, checked like `sendRichMessage`); otherwise as `sendMessageDraft`. */
const sendRichMessageDraft: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  if (chat.type !== 'private') throw refuse('draftOnlyPrivate');
  const draftId = params.int('draft_id');
  if (draftId === 0) throw refuse('draftIdInvalid');
  const rich = richContent(params.json('rich_message'));
  const threadId = resolveThread(chat, params);
  spendToken(ctx, chat, 'draft');
  ctx.store.recordDraft(
    {
      chatId: chat.id,
      draftId,
      text: rich.markdown,
      entities: [],
      rich: true,
      canStop: params.bool('can_stop'),
      ...(keepsOnStop(params, ctx.lacks) ? { keepOnStop: true as const } : {}),
      ...(threadId !== undefined ? { threadId } : {}),
    },
    rich.html,
  );
  return true;
};

const sendChatAction: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const action = params.str('action');
  if (!CHAT_ACTIONS.has(action)) throw refuse('wrongAction');
  ctx.store.recordAction(chat.id, action, resolveThread(chat, params));
  return true;
};

/** The emoji a bot may set as a reaction (`ReactionTypeEmoji`, Bot API). */
const BOT_REACTIONS = new Set(
  '👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡'.split(
    ' ',
  ),
);

/**
 * Reactions are recorded on the message; only emoji reactions are kept. Refused like Telegram: an emoji
 * bots may not set, or one the chat's `available_reactions` do not allow, is `REACTION_INVALID`. Each
 * call spends the chat's reaction window (see `rate-limiter.ts`), not its message slots.
 */
const setMessageReaction: MethodHandler = (params, ctx) => {
  const chat = requireChat(params, ctx);
  const message = liveMessage(ctx, chat.id, params.int('message_id'));
  if (!message) throw new BotApiError(400, 'Bad Request: message to react not found');
  spendToken(ctx, chat, 'reaction');
  const reaction = params.json('reaction');
  const emoji = Array.isArray(reaction)
    ? reaction.flatMap((r: unknown) =>
        typeof r === 'object' && r !== null && typeof (r as { emoji?: unknown }).emoji === 'string'
          ? [(r as { emoji: string }).emoji]
          : [],
      )
    : [];
  const allowed = chat.availableReactions;
  if (emoji.some((e) => !BOT_REACTIONS.has(e) || (allowed !== undefined && !allowed.includes(e))))
    throw refuse('reactionInvalid');
  ctx.store.setReactions(message, emoji);
  return true;
};

/** The status methods, by Telegram's spelling. */
export const STATUS_METHODS = {
  sendMessageDraft,
  sendRichMessageDraft,
  sendChatAction,
  setMessageReaction,
} as const satisfies Record<string, MethodHandler>;
