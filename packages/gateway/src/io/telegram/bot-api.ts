/**
 * The slice of grammY's `Api` the gateway uses, how it reads Telegram's errors, and the gateway's `Bot`
 * with its transformer chain. Modules depend on the narrow {@link BotApi} `Pick<>` rather than on `Bot`,
 * so tests and the benchmark can hand in any structural stand-in.
 */
import { autoRetry } from '@grammyjs/auto-retry';
import { type Clock, type Logger, systemClock } from '@switchyard/protocol';
import { type Api, Bot, GrammyError, HttpError, type Transformer } from 'grammy';
import type { Budget } from '../../core/telegram/send-pacing.js';

/** The Bot API methods the gateway calls. */
export type BotApi = Pick<
  Api,
  | 'sendMessage'
  | 'sendRichMessage'
  | 'sendMessageDraft'
  | 'sendRichMessageDraft'
  | 'sendDocument'
  | 'sendPhoto'
  | 'sendMediaGroup'
  | 'editMessageText'
  | 'deleteMessage'
  | 'sendChatAction'
  | 'pinChatMessage'
  | 'unpinChatMessage'
  | 'getChat'
  | 'answerCallbackQuery'
  | 'editMessageReplyMarkup'
  | 'setMyCommands'
  | 'getFile'
  | 'getMe'
  | 'getUpdates'
  | 'createForumTopic'
  | 'setMessageReaction'
>;

/** Telegram's description of a failed call, or the error's message. */
export function errorText(error: unknown): string {
  if (error instanceof GrammyError) return error.description;
  return error instanceof Error ? error.message : String(error);
}

/** The Bot API's error code (400, 403, 409, 429 …), if this is a Bot API error. */
export function errorCode(error: unknown): number | undefined {
  return error instanceof GrammyError ? error.error_code : undefined;
}

/** "message is not modified": the edit was a no-op, which is success for us. */
export function isNotModified(error: unknown): boolean {
  return errorCode(error) === 400 && /message is not modified/i.test(errorText(error));
}

/**
 * The chat takes no reaction of ours: `REACTION_INVALID` (not in its `available_reactions`), reactions
 * turned off, or a chat type without them. Its states go to the one marker message instead.
 */
export function isReactionRefused(error: unknown): boolean {
  return errorCode(error) === 400 && /REACTION_INVALID|REACTIONS?_.*(DISABLED|EMPTY)/i.test(errorText(error));
}

/** The HTML was rejected ("can't parse entities"): send the plain-text fallback instead. */
export function isParseError(error: unknown): boolean {
  return (
    errorCode(error) === 400 &&
    /can't parse entities|unsupported start tag|can't find end/i.test(errorText(error))
  );
}

/**
 * The Bot API server does not know the method (an older self-hosted server without rich messages):
 * 404 "Not Found: method not found".
 */
export function isMethodMissing(error: unknown): boolean {
  return errorCode(error) === 404 && /method not found|not found/i.test(errorText(error));
}

/**
 * The call's answer never arrived (a network error, or a server error after the request was taken):
 * Telegram may or may not have done it.
 */
export function answerLost(error: unknown): boolean {
  if (error instanceof HttpError) return true;
  const code = errorCode(error);
  return code !== undefined && code >= 500;
}

/** A rich message Telegram refused as malformed or oversized (400 other than a gone message). */
export function isRichRefused(error: unknown): boolean {
  return errorCode(error) === 400 && !isGone(error) && !isNotModified(error);
}

/** The message to edit or delete no longer exists (a user deleted it). */
export function isGone(error: unknown): boolean {
  return (
    errorCode(error) === 400 &&
    /message to (edit|delete) not found|message can't be edited/i.test(errorText(error))
  );
}

/**
 * The exchange failed without Telegram's answer (connection refused, reset or dropped): the call may or
 * may not have been carried out.
 */
export function isOutcomeUnknown(error: unknown): boolean {
  return error instanceof HttpError;
}

/**
 * Methods that create a message: retried after a network error they could double it, so auto-retry
 * leaves their network errors to the caller (`send-journal.ts` probes before sending again).
 */
const CREATES_MESSAGE = new Set(['sendMessage']);

/**
 * Methods whose callers retry every failure themselves, with their own capped backoff and a log line
 * per failure (`io/intake/intake.ts` for `getUpdates`, boot's `getMe`): auto-retry's own five attempts would
 * keep an unreachable Telegram silent for the first 100 s, so only their 429s are waited out here.
 */
const RETRIED_BY_CALLER = new Set(['getUpdates', 'getMe']);

/** Classifies a failure for the structured pin log. */
export function outcomeOf(error: unknown): 'rate-limited' | 'forbidden' | 'fail' {
  const code = errorCode(error);
  if (code === 429) return 'rate-limited';
  if (code === 403 || (code === 400 && /not enough rights|rights/i.test(errorText(error))))
    return 'forbidden';
  return 'fail';
}

/** How long one call keeps waiting out Telegram's 429s before its caller (and auto-retry) hears of one. */
export const RATE_LIMIT_PATIENCE_MS = 60_000;

/** Sleeps `ms` on `clock`, or less when `signal` aborts (resolving, not rejecting). */
const pauseOn =
  (clock: Clock) =>
  (ms: number, signal?: AbortSignal): Promise<void> =>
    clock.sleep(ms, signal).catch(() => {});

/**
 * Waits out 429s as Telegram asks (`retry_after`), for up to `patienceMs` in all per call, then hands
 * the 429 on. A 429 storm is Telegram's to end, so it must not spend auto-retry's five attempts, which
 * are for server and network errors: a final edit refused for more than five one-second `retry_after`s
 * was otherwise dropped for good, leaving the reply cut short.
 */
export function waitOutRateLimits(
  patienceMs = RATE_LIMIT_PATIENCE_MS,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void> = pauseOn(systemClock),
): Transformer {
  return async (prev, method, payload, signal) => {
    let waited = 0;
    for (;;) {
      const result = await prev(method, payload, signal);
      const after = result.ok || result.error_code !== 429 ? undefined : result.parameters?.retry_after;
      if (after === undefined || waited + after * 1_000 > patienceMs || signal?.aborted) return result;
      // grammY types its signal with the abort-controller polyfill's declaration; at run time it is Node's.
      await sleep(after * 1_000, signal as AbortSignal | undefined);
      waited += after * 1_000;
    }
  };
}

/** A Bot API call's result as the bot reports it. */
export type CallResult = { ok: boolean; error_code?: number };

/**
 * Every raw result of the bot's calls, for the observers that can only exist after the bot: the alerts
 * hear its 429s and send through it. The bot is built telling this; each observer joins once it is
 * built, before the boot makes the first call.
 */
export interface CallResults {
  /** Passed to {@link createBot} as its `onResult`. */
  tell(method: string, result: CallResult): void;
  /** Joins an observer; it sees every result told after this. */
  observe(observer: (method: string, result: CallResult) => void): void;
}

/** Creates the results' fan-out, with no observer yet. */
export function createCallResults(): CallResults {
  const observers: ((method: string, result: CallResult) => void)[] = [];
  return {
    tell(method, result) {
      for (const observer of observers) observer(method, result);
    },
    observe(observer) {
      observers.push(observer);
    },
  };
}

/**
 * The gateway's `Bot`: every raw 429 tightens the chat's send budget (an inner transformer, so it sees
 * each one before the outer ones); {@link waitOutRateLimits} waits 429s out for up to a minute; auto-retry,
 * outermost, retries server errors, and network errors of every method but those that create a message,
 * up to five times).
 */
export function createBot(options: {
  token: string;
  apiRoot: string;
  budget: Budget;
  logger: Logger;
  /** Sees every raw result, each 429 included (metrics). */
  onResult?: (method: string, result: CallResult) => void;
  /** Time for the 429 penalties and waits; default the system clock. */
  clock?: Clock;
}): Bot {
  const { budget, logger } = options;
  const clock = options.clock ?? systemClock;
  const bot = new Bot(options.token, { client: { apiRoot: options.apiRoot } });
  bot.api.config.use(async (prev, method, payload, signal) => {
    const result = await prev(method, payload, signal);
    options.onResult?.(method, result);
    if (!result.ok && result.error_code === 429) {
      const chatId = (payload as { chat_id?: unknown }).chat_id;
      const retryAfter = result.parameters?.retry_after ?? 1;
      if (typeof chatId === 'number') budget.penalize(chatId, retryAfter, clock.now());
      logger.warn(
        { event: 'rate_limited', method, chat: chatId, retryAfter },
        'Telegram said 429; chat budget tightened',
      );
    }
    return result;
  });
  bot.api.config.use(waitOutRateLimits(RATE_LIMIT_PATIENCE_MS, pauseOn(clock)));
  const retry = { maxRetryAttempts: 5, maxDelaySeconds: 120 };
  const retryAll = autoRetry({ ...retry, rethrowHttpErrors: false, rethrowInternalServerErrors: false });
  // A send that creates a message is not retried after its answer was lost (a second message would
  // appear): the error goes to the send journal, which looks for the message first. 429s still wait.
  const retryAnswered = autoRetry({ ...retry, rethrowHttpErrors: true, rethrowInternalServerErrors: false });
  // A rich message's 5xx may also have created it (`answerLost`): thrown too (`SendJournal.sendRich`);
  // and the methods in RETRIED_BY_CALLER hand every failure to their callers at once.
  const retryOnlyRefusals = autoRetry({
    ...retry,
    rethrowHttpErrors: true,
    rethrowInternalServerErrors: true,
  });
  bot.api.config.use((prev, method, payload, signal) =>
    (method === 'sendRichMessage' || RETRIED_BY_CALLER.has(method)
      ? retryOnlyRefusals
      : CREATES_MESSAGE.has(method)
        ? retryAnswered
        : retryAll)(prev, method, payload, signal),
  );
  return bot;
}
