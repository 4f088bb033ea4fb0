/**
 * The slice of grammY's `Api` the gateway uses, and how it reads Telegram's errors. Modules depend on
 * this narrow `Pick<>` rather than on `Bot`, so tests and the benchmark can hand in any structural
 * stand-in.
 */
import { type Api, GrammyError } from 'grammy';

/** The Bot API methods the gateway calls. */
export type BotApi = Pick<
  Api,
  | 'sendMessage'
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

/** The HTML was rejected ("can't parse entities"): send the plain-text fallback instead. */
export function isParseError(error: unknown): boolean {
  return (
    errorCode(error) === 400 &&
    /can't parse entities|unsupported start tag|can't find end/i.test(errorText(error))
  );
}

/** The message to edit or delete no longer exists (a user deleted it). */
export function isGone(error: unknown): boolean {
  return (
    errorCode(error) === 400 &&
    /message to (edit|delete) not found|message can't be edited/i.test(errorText(error))
  );
}

/** Classifies a failure for the structured pin log. */
export function outcomeOf(error: unknown): 'rate-limited' | 'forbidden' | 'fail' {
  const code = errorCode(error);
  if (code === 429) return 'rate-limited';
  if (code === 403 || (code === 400 && /not enough rights|rights/i.test(errorText(error))))
    return 'forbidden';
  return 'fail';
}
