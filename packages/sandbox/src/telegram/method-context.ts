/**
 * What every Bot API method handler receives, and the checks most of them share (the chat exists, the
 * forum topic exists, the replied-to message exists, a rate-limit token is available).
 */
import { refuse, tooManyRequests } from './api-error.js';
import type { ChatStore } from './chat-store.js';
import type { NewerApiPart } from './newer-api.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SandboxChat, SandboxMessage } from './records.js';
import type { RequestParams } from './request-params.js';
import type { UpdateQueue } from './update-queue.js';
import type { WireBotUser } from './wire.js';

/** The server state and settings a handler may use. */
export interface MethodContext {
  readonly store: ChatStore;
  readonly updates: UpdateQueue;
  readonly limiter: RateLimiter;
  readonly bot: WireBotUser;
  /** Aborted when the client goes away or the server stops. */
  readonly signal: AbortSignal;
  readonly now: () => number;
  /** How long a callback query may wait for its answer. */
  readonly callbackQueryTtlMs: number;
  /** `getFile` refuses larger files (Telegram: 20 MB). */
  readonly maxDownloadBytes: number;
  /** The newer Bot API parts this server behaves as lacking (see `newer-api.ts`). */
  readonly lacks: ReadonlySet<NewerApiPart>;
}

/** A Bot API method: parameters in, `result` out, or a thrown {@link BotApiError}. */
export type MethodHandler = (params: RequestParams, ctx: MethodContext) => unknown;

/** The chat named by `chat_id`, or "chat not found". */
export function requireChat(params: RequestParams, ctx: MethodContext): SandboxChat {
  if (!params.has('chat_id')) throw refuse('chatNotFound');
  const raw = params.optStr('chat_id') ?? '';
  if (!/^-?\d+$/.test(raw.trim())) throw refuse('chatNotFound');
  const chat = ctx.store.chat(Number(raw));
  if (!chat) throw refuse('chatNotFound');
  return chat;
}

/**
 * The topic named by `message_thread_id`: undefined outside forums and private chats, and for a forum's
 * General topic; "message thread not found" for a topic the forum or private chat does not have (a
 * private chat has topics only while the bot has topic mode, Bot API 9.3).
 */
export function resolveThread(chat: SandboxChat, params: RequestParams): number | undefined {
  const threadId = params.optInt('message_thread_id');
  if (threadId === undefined) return undefined;
  if (chat.type === 'private') {
    if (!chat.topics.some((t) => t.threadId === threadId)) throw refuse('threadNotFound');
    return threadId;
  }
  if (!chat.isForum || threadId === 1) return undefined;
  if (!chat.topics.some((t) => t.threadId === threadId)) throw refuse('threadNotFound');
  return threadId;
}

/** A message of the chat that is still there, or undefined. */
export function liveMessage(
  ctx: MethodContext,
  chatId: number,
  messageId: number,
): SandboxMessage | undefined {
  const message = ctx.store.message(chatId, messageId);
  return message && !message.deleted ? message : undefined;
}

/**
 * The message a new one replies to, from `reply_parameters` or the older `reply_to_message_id`;
 * "message to be replied not found" unless `allow_sending_without_reply` was set.
 */
export function replyTarget(
  params: RequestParams,
  ctx: MethodContext,
  chat: SandboxChat,
): SandboxMessage | undefined {
  const parameters = params.json('reply_parameters') as
    | { message_id?: unknown; allow_sending_without_reply?: unknown }
    | undefined;
  const id =
    typeof parameters?.message_id === 'number' ? parameters.message_id : params.optInt('reply_to_message_id');
  if (id === undefined) return undefined;
  const target = liveMessage(ctx, chat.id, id);
  const lenient =
    parameters?.allow_sending_without_reply === true || params.bool('allow_sending_without_reply');
  if (!target && !lenient) throw refuse('replyNotFound');
  return target;
}

/** Spends a rate-limit token for a send or edit in `chat`, or throws the 429. */
export function spendToken(
  ctx: MethodContext,
  chat: SandboxChat,
  kind: 'message' | 'draft' | 'reaction' = 'message',
): void {
  const decision = ctx.limiter.take(chat.id, chat.type !== 'private', kind);
  if (!decision.allowed) throw tooManyRequests(decision.retryAfter);
}

/** Whether the bot may pin in `chat`, or "not enough rights to manage pinned messages in the chat". */
export function requirePinRights(chat: SandboxChat): void {
  if (chat.type !== 'private' && !chat.botCanPin) throw refuse('noPinRights');
}
