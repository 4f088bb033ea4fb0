/**
 * Where the gateway uses the Bot API's newer parts, and what it does on a server without them — pure
 * decisions over what this run has learnt of the server (`ServerParts`); the shell
 * (`io/telegram/server-parts.ts`) keeps that knowledge for the run and performs the decisions.
 *
 * The parts (Bot API 10.3, named as Telegram documents them):
 * - `keep_on_stop` on `sendMessageDraft`/`sendRichMessageDraft`: the draft stays in the chat when the
 *   user presses its stop button, so the partial answer does not vanish while the final message (the
 *   same text, "⏹ Stopped.") is on its way. Without it the draft disappears at the press (the old way).
 * - `InlineKeyboardButton.disabled` (a `DisabledButton {}`): used on the `/sessions` list, where a pressed
 *   Stop or Reset button becomes a disabled "… ✓" in place while the other rows stay live; the old way
 *   leaves the keyboard as it was. Permission and question prompts keep their old way (the keyboard goes
 *   and the text says "✅ Allowed" / "→ answer"): their buttons are all spent at once, and a disabled copy
 *   of the answer beside the same words in the text would say it twice.
 * - `ephemeral_message_parameters {receiver_user_id, callback_query_id?}` on `sendMessage`: what only one
 *   member of a group should see — the refusal to someone not on the allowlist who addresses the bot
 *   (the old way: nothing is said in groups), and the answers to `/help` and `/status` (the old way: the
 *   group sees them). In a private chat everything is already the one user's: no ephemeral there.
 *
 * How a missing part is learnt, once per run: a 400 that names the part (the parameter, or — for a
 * disabled button — "Text buttons are unallowed", which is how a server without the kind reads a button
 * with only `text`). Telegram's servers ignore parameters they do not know, so an older server shows
 * itself for ephemeral messages by the answer: a sent message without `receiver_user` went to everyone,
 * and is deleted at once. Any other refusal is that call's own and
 * teaches nothing; a message for one member it refused is said the old way, that once.
 */

/** A newer Bot API part the gateway uses where the server has it. */
export type NewerPart = 'keep_on_stop' | 'disabled_buttons' | 'ephemeral';

/** What this run knows of one part: untried, seen working, or seen missing. */
export type Support = 'unknown' | 'yes' | 'no';

/** What this run knows of the server's newer parts. */
export type ServerParts = Readonly<Record<NewerPart, Support>>;

/** A run's start: every part is tried until the server shows it lacks it. */
export const UNTRIED: ServerParts = {
  keep_on_stop: 'unknown',
  disabled_buttons: 'unknown',
  ephemeral: 'unknown',
};

/** A Bot API call's outcome, as the decisions read it. */
export type PartOutcome =
  | { kind: 'ok' }
  /** Telegram refused the call. */
  | { kind: 'refused'; code: number; description: string }
  /** The call went through but the part was ignored (an ephemeral message sent to everyone). */
  | { kind: 'ignored' };

/** What the caller does after a call that used a part. */
export type PartFollowUp =
  /** Nothing more: it worked, or failed for a reason of its own. */
  | 'none'
  /** The server lacks the part: do it again the old way. */
  | 'old_way'
  /** The server ignored the part and did the call anyway: undo it (delete the message), then the old way. */
  | 'undo_then_old_way';

/** What a refusal says about `part`: whether the server lacks it. */
export function refusalShowsLack(part: NewerPart, code: number, description: string): boolean {
  // Every part is a parameter or a field of a method the server has: a 404 is about something else.
  if (code !== 400) return false;
  if (/unknown parameter|unsupported parameter|unexpected parameter/i.test(description)) return true;
  switch (part) {
    case 'keep_on_stop':
      return /keep_on_stop/i.test(description);
    case 'disabled_buttons':
      return /text buttons are unallowed|disabled/i.test(description);
    case 'ephemeral':
      // Not any error naming ephemeral messages: who may receive one is the chat's rule, not the server's.
      return /can't parse ephemeral_message_parameters/i.test(description);
  }
}

/** The knowledge after a call that used `part`, and the caller's follow-up (see the module comment). */
export function learnPart(
  parts: ServerParts,
  part: NewerPart,
  outcome: PartOutcome,
): { parts: ServerParts; followUp: PartFollowUp } {
  const set = (support: Support): ServerParts =>
    parts[part] === support ? parts : { ...parts, [part]: support };
  switch (outcome.kind) {
    case 'ok':
      return { parts: set('yes'), followUp: 'none' };
    case 'ignored':
      return { parts: set('no'), followUp: 'undo_then_old_way' };
    case 'refused':
      return refusalShowsLack(part, outcome.code, outcome.description)
        ? { parts: set('no'), followUp: 'old_way' }
        : { parts, followUp: 'none' };
  }
}

/** The stop-button parameters of a draft: `keep_on_stop` unless the server is known to lack it. */
export function draftStopParams(parts: ServerParts): { can_stop: true; keep_on_stop?: true } {
  return parts.keep_on_stop === 'no' ? { can_stop: true } : { can_stop: true, keep_on_stop: true };
}

/** A button of an inline keyboard, as far as these decisions read it. */
export interface KeyboardButton {
  text: string;
  callback_data?: string;
  disabled?: Record<string, never>;
  [other: string]: unknown;
}

/** What the pressed button says once it has done its job: its own words, ticked. */
export function spentLabel(text: string): string {
  return `${text} ✓`;
}

/**
 * The keyboard once the button with `data` has done its job: that button replaced by a disabled one
 * (its words ticked), every other button as it was. Undefined when nothing is to be edited: the server
 * lacks disabled buttons (the old way keeps the keyboard), or no button carries `data`.
 */
export function spendButton(
  parts: ServerParts,
  keyboard: readonly (readonly KeyboardButton[])[],
  data: string,
): KeyboardButton[][] | undefined {
  if (parts.disabled_buttons === 'no') return undefined;
  let found = false;
  const rows = keyboard.map((row) =>
    row.map((button) => {
      if (button.callback_data !== data) return { ...button };
      found = true;
      return { text: spentLabel(button.text), disabled: {} };
    }),
  );
  return found ? rows : undefined;
}

/** Where a message for one member of a chat is said. */
export type OneMemberNotice =
  /** Sent with these `ephemeral_message_parameters`: only the receiver sees it. */
  | { kind: 'ephemeral'; parameters: { receiver_user_id: number; callback_query_id?: string } }
  /** Sent as an ordinary message to the chat. */
  | { kind: 'public' }
  /** Not said at all. */
  | { kind: 'silent' };

/**
 * How to say something meant for one member: ephemerally in a group while the server may have it,
 * otherwise `fallback` (the old way: `public` for a command's answer, `silent` for a refusal in a group).
 * A private chat is the member's own: an ordinary message.
 */
export function oneMemberNotice(
  parts: ServerParts,
  target: {
    chatType: 'private' | 'group' | 'supergroup' | 'channel';
    receiverId: number | undefined;
    callbackQueryId?: string | undefined;
  },
  fallback: 'public' | 'silent',
): OneMemberNotice {
  if (target.chatType === 'private') return { kind: 'public' };
  if (target.receiverId === undefined || target.chatType === 'channel' || parts.ephemeral === 'no')
    return { kind: fallback };
  return {
    kind: 'ephemeral',
    parameters: {
      receiver_user_id: target.receiverId,
      ...(target.callbackQueryId !== undefined ? { callback_query_id: target.callbackQueryId } : {}),
    },
  };
}

/** Whether a sent message is the ephemeral one asked for (its answer names the receiver). */
export function sentEphemerally(
  sent: { receiver_user?: { id: number } | undefined },
  receiverId: number,
): boolean {
  return sent.receiver_user?.id === receiverId;
}
