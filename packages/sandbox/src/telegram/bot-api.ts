/**
 * The Bot API surface: every method the sandbox implements, looked up case-insensitively as Telegram
 * does, and one entry point that turns a method call into Telegram's response body.
 */
import { BotApiError } from './api-error.js';
import { CHAT_METHODS } from './chat-methods.js';
import { inlineKeyboard } from './message-content.js';
import { MESSAGE_METHODS } from './message-methods.js';
import type { MethodContext, MethodHandler } from './method-context.js';
import { checkDisabledButtons } from './newer-api.js';
import type { RequestParams } from './request-params.js';
import { STATUS_METHODS } from './status-methods.js';
import type { WireFailure, WireOk } from './wire.js';

/** Every implemented method, by Telegram's spelling. */
export const BOT_API_METHODS = {
  ...CHAT_METHODS,
  ...MESSAGE_METHODS,
  ...STATUS_METHODS,
} as const satisfies Record<string, MethodHandler>;

/** A method name as Telegram spells it. */
export type BotApiMethod = keyof typeof BOT_API_METHODS;

const byLowerCase = new Map<string, BotApiMethod>(
  Object.keys(BOT_API_METHODS).map((name) => [name.toLowerCase(), name as BotApiMethod]),
);

/** The canonical spelling of a method name, or undefined when the sandbox does not implement it. */
export function canonicalMethod(name: string): BotApiMethod | undefined {
  return byLowerCase.get(name.toLowerCase());
}

/**
 * Runs one method. Refusals become Telegram's failure body; any other exception is a sandbox bug and is
 * reported as a 500 so that it is noticed rather than mistaken for Telegram behaviour.
 */
export async function callMethod(
  method: BotApiMethod,
  params: RequestParams,
  ctx: MethodContext,
): Promise<WireOk | WireFailure> {
  try {
    // Disabled buttons, as this server knows them; a malformed keyboard is the method's to refuse, in its order.
    if (params.has('reply_markup')) checkDisabledButtons(keyboardOrNone(params), ctx.lacks);
    const result = await BOT_API_METHODS[method](params, ctx);
    return { ok: true, result };
  } catch (err) {
    if (err instanceof BotApiError) return err.toWire();
    return {
      ok: false,
      error_code: 500,
      description: `Internal Server Error: sandbox bug in ${method}: ${String(err)}`,
    };
  }
}

/** The request's inline keyboard, or undefined when it is malformed (the method refuses that itself). */
function keyboardOrNone(params: RequestParams): ReturnType<typeof inlineKeyboard> {
  try {
    return inlineKeyboard(params.json('reply_markup'));
  } catch {
    return undefined;
  }
}
