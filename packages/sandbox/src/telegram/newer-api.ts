/**
 * The Bot API 10.3 parts the sandbox models beyond the basics — a draft kept on stop (`keep_on_stop`),
 * disabled inline buttons (`InlineKeyboardButton.disabled`, a `DisabledButton` which holds no
 * information) and ephemeral messages (`ephemeral_message_parameters` = `EphemeralMessageParameters
 * { receiver_user_id, callback_query_id?, replace_callback_query_message? }` on `sendMessage`; the sent
 * `Message` has `message_id` 0, `receiver_user` and `ephemeral_message_id`) — and the switch that makes
 * the sandbox an older server without them, so a client's fallback can be tested.
 *
 * An older server behaves as Telegram's server does with what it does not know: an unknown parameter
 * (`keep_on_stop`, `ephemeral_message_parameters`) is ignored — the draft vanishes at the stop press, the
 * "ephemeral" message is an ordinary one everyone sees — and a button with no kind it knows (only
 * `text` and `disabled`) is refused with "Text buttons are unallowed in the inline keyboard".
 *
 * Not modelled: ephemeral edits and deletes (`editEphemeralMessage*`, `deleteEphemeralMessage`), replies
 * to ephemeral messages (`reply_parameters.ephemeral_message_id`, 15 s), ephemeral media, and who may
 * receive one (Telegram's docs do not say which chats and members qualify; the sandbox accepts any user
 * it knows in a group or supergroup).
 */
import { BotApiError, refuse } from './api-error.js';
import type { ChatStore } from './chat-store.js';
import type { SandboxChat } from './records.js';
import type { RequestParams } from './request-params.js';
import type { WireInlineKeyboardMarkup, WireUser } from './wire.js';

/** A newer part of the Bot API that the sandbox can be told to lack. */
export type NewerApiPart = 'keep_on_stop' | 'disabled_buttons' | 'ephemeral_messages';

/** Every part, for "an older server lacking all of them". */
export const NEWER_API_PARTS: readonly NewerApiPart[] = [
  'keep_on_stop',
  'disabled_buttons',
  'ephemeral_messages',
];

/** Whether a draft call asked to stay on the user's stop press; an older server ignores the parameter. */
export function keepsOnStop(params: RequestParams, lacks: ReadonlySet<NewerApiPart>): boolean {
  return !lacks.has('keep_on_stop') && params.bool('keep_on_stop');
}

/** Whether a button is a disabled one (`disabled: {}`), which does nothing when pressed. */
export function isDisabledButton(button: { [field: string]: unknown }): boolean {
  return typeof button.disabled === 'object' && button.disabled !== null;
}

/**
 * Checks a keyboard's disabled buttons: `disabled` must be an object (a `DisabledButton`); an older server
 * knows no such kind, so a button with only `text` and `disabled` is a text button, which it refuses.
 */
export function checkDisabledButtons(
  markup: WireInlineKeyboardMarkup | undefined,
  lacks: ReadonlySet<NewerApiPart>,
): void {
  for (const button of markup?.inline_keyboard.flat() ?? []) {
    if (button.disabled === undefined || button.disabled === null) continue;
    if (lacks.has('disabled_buttons')) {
      const others = Object.keys(button).filter(
        (k) => k !== 'text' && k !== 'disabled' && button[k] !== undefined && button[k] !== null,
      );
      if (others.length === 0) throw refuse('textButtonsUnallowed');
      continue;
    }
    if (!isDisabledButton(button))
      throw new BotApiError(
        400,
        "Bad Request: can't parse inline keyboard button: disabled must be an object",
      );
  }
}

/** Who an ephemeral message is for, and the press that triggered it. */
export interface EphemeralTarget {
  receiver: WireUser;
  callbackQueryId?: string;
}

/**
 * The receiver of a `sendMessage` with `ephemeral_message_parameters`, or undefined for an ordinary
 * message (no parameters, or an older server, which ignores them). `receiver_user_id` is required and
 * must name a user the sandbox knows; a `callback_query_id` must name a press of that user in this chat.
 */
export function ephemeralTarget(
  params: RequestParams,
  store: Pick<ChatStore, 'user' | 'queries'>,
  chat: SandboxChat,
  lacks: ReadonlySet<NewerApiPart>,
): EphemeralTarget | undefined {
  if (lacks.has('ephemeral_messages') || !params.has('ephemeral_message_parameters')) return undefined;
  const raw = params.json('ephemeral_message_parameters');
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new BotApiError(400, "Bad Request: can't parse ephemeral_message_parameters JSON object");
  const given = raw as { receiver_user_id?: unknown; callback_query_id?: unknown };
  if (given.receiver_user_id === undefined || given.receiver_user_id === null)
    throw new BotApiError(400, 'Bad Request: receiver_user_id is empty');
  if (typeof given.receiver_user_id !== 'number' || !Number.isSafeInteger(given.receiver_user_id))
    throw new BotApiError(400, 'Bad Request: wrong integer value for parameter receiver_user_id');
  const receiver = store.user(given.receiver_user_id);
  if (!receiver) throw new BotApiError(400, 'Bad Request: user not found');
  if (given.callback_query_id === undefined) return { receiver };
  const query =
    typeof given.callback_query_id === 'string' ? store.queries.get(given.callback_query_id) : undefined;
  if (!query || query.chatId !== chat.id || query.from.id !== receiver.id) throw refuse('queryTooOld');
  return { receiver, callbackQueryId: query.id };
}
