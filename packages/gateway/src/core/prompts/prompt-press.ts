/**
 * What a press on a prompt's button, or a typed answer, means — decided purely from the press and the
 * prompt's stored state; the shell (`io/prompts/prompts.ts`) performs the decision: it answers the callback,
 * writes the prompt's row and the answer frame in one transaction, and edits the prompt's message.
 *
 * The rules: a press whose prompt is gone, answered or closed is expired (and its keyboard is taken
 * away); a press from any message but the prompt's own is refused; a permission press applies only the
 * choices the prompt showed; a question already answered says so (a stale keyboard, or a double press);
 * a multi-select option toggles; the last question answered completes the prompt. A typed answer
 * answers the first open question of the conversation's open question prompt.
 */
import type { FrameOf, Route } from '@switchyard/protocol/common';
import { routeOfMessage } from '../intake/route.js';

/** A decoded button press (`io/prompts/keyboards.ts` encodes and decodes them). */
export type ButtonPress =
  | { kind: 'permission'; token: string; decision: 'allow' | 'allow_always' | 'deny'; suggestion?: number }
  | { kind: 'option'; token: string; question: number; option: number }
  | { kind: 'done'; token: string; question: number };

/** A prompt as the store keeps it (`store/prompt-table.ts` stores exactly this shape). */
export interface PromptState {
  token: string;
  requestId: string;
  kind: 'permission' | 'question';
  route: Route;
  messageId: number | undefined;
  payload: unknown;
  /** Question index → chosen option indexes (multi-select toggles). */
  selection: Record<string, number[]>;
  /** Question text → answer, for the questions of a multi-question prompt answered so far. */
  answers: Record<string, string>;
  state: 'open' | 'answered' | 'closed';
}

/** Where a press came from: the message its keyboard is on. */
export interface PressedMessage {
  message_id: number;
  chat: { id: number };
  message_thread_id?: number | undefined;
  is_topic_message?: boolean | undefined;
}

/**
 * What a permission prompt offered (`io/prompts/keyboards.ts` permissionChoices): suggestion indexes per
 * button.
 */
export interface PermissionChoices {
  always: readonly number[];
  separate: readonly number[];
}

/** What to do with a press. */
export type PressDecision =
  /** Say "expired"; `clearKeyboard`: the press came from a keyboard that should not be there. */
  | { kind: 'expired'; clearKeyboard: boolean }
  /** Refuse: the press is not from the prompt's own message. */
  | { kind: 'elsewhere' }
  /** Queue this answer with the prompt closed as answered; acknowledge the press with `ack`. */
  | { kind: 'permission'; answer: FrameOf<'permission_answer'>; ack: 'Allowed' | 'Denied' }
  /** The question was answered already: say so, change nothing. */
  | { kind: 'already_answered' }
  /** Keep the new multi-select `selection`, and show it. */
  | { kind: 'toggle'; selection: Record<string, number[]> }
  /** Record `collected` (the prompt completes when every question has an answer, see {@link isComplete}). */
  | { kind: 'answer'; selection: Record<string, number[]>; collected: Record<string, string> };

/**
 * Whether a press came from the prompt's own message: same chat, same forum topic (or none), and the same
 * message when its id is known. `callback_data` is chosen by the client, so a press carrying a prompt's
 * token from any other message is refused, even from a user allowed there.
 */
export function pressedOnPrompt(message: PressedMessage | undefined, row: PromptState): boolean {
  if (!message || message.chat.id !== row.route.chatId) return false;
  if (row.messageId !== undefined && message.message_id !== row.messageId) return false;
  return routeOfMessage(message).threadId === row.route.threadId;
}

/**
 * The suggestion indexes a permission press applies, as its prompt offered them; `null` when the press
 * names a choice the prompt did not show (a forged or stale button).
 */
export function appliedSuggestions(
  choices: PermissionChoices,
  press: ButtonPress & { kind: 'permission' },
): number[] | null {
  if (press.decision !== 'allow_always') return [];
  const { always, separate } = choices;
  if (press.suggestion !== undefined) return separate.includes(press.suggestion) ? [press.suggestion] : null;
  return always.length > 0 ? [...always] : null;
}

/** What a press means (see the module comment); `choices` is what a permission prompt showed. */
export function decidePress(input: {
  press: ButtonPress | undefined;
  row: PromptState | undefined;
  message: PressedMessage | undefined;
  choices?: PermissionChoices | undefined;
}): PressDecision {
  const { press, row, message } = input;
  if (!press || !row || row.state !== 'open')
    return { kind: 'expired', clearKeyboard: message !== undefined };
  if (!pressedOnPrompt(message, row)) return { kind: 'elsewhere' };
  if (press.kind === 'permission') {
    const apply =
      row.kind === 'permission' && input.choices ? appliedSuggestions(input.choices, press) : null;
    if (apply === null) return { kind: 'expired', clearKeyboard: false };
    return {
      kind: 'permission',
      answer: {
        type: 'permission_answer',
        requestId: row.requestId,
        decision: press.decision,
        ...(apply.length > 0 ? { suggestions: apply } : {}),
        ...(press.decision === 'deny' ? { message: 'The user denied this.' } : {}),
      },
      ack: press.decision === 'deny' ? 'Denied' : 'Allowed',
    };
  }
  const frame = row.payload as FrameOf<'question'>;
  const q = row.kind === 'question' ? frame.questions[press.question] : undefined;
  if (!q) return { kind: 'expired', clearKeyboard: false };
  if (row.answers[q.question] !== undefined) return { kind: 'already_answered' };
  const selection = { ...row.selection };
  const collected = { ...row.answers };
  const key = String(press.question);
  if (press.kind === 'option') {
    const option = q.options[press.option];
    if (!option) return { kind: 'expired', clearKeyboard: false };
    if (!q.multiSelect)
      return { kind: 'answer', selection, collected: { ...collected, [q.question]: option.label } };
    const chosen = new Set(selection[key] ?? []);
    if (chosen.has(press.option)) chosen.delete(press.option);
    else chosen.add(press.option);
    return { kind: 'toggle', selection: { ...selection, [key]: [...chosen].sort((a, b) => a - b) } };
  }
  if (!q.multiSelect) return { kind: 'expired', clearKeyboard: false };
  const labels = (selection[key] ?? []).map((i) => q.options[i]?.label ?? '').filter(Boolean);
  return { kind: 'answer', selection, collected: { ...collected, [q.question]: labels.join(', ') } };
}

/** Whether every question of `frame` has an answer in `collected`. */
export function isComplete(frame: FrameOf<'question'>, collected: Record<string, string>): boolean {
  return frame.questions.every((q) => collected[q.question] !== undefined);
}

/**
 * What a typed text answers among a conversation's open prompts: the first unanswered question of its
 * first open question prompt, or nothing (the text is an ordinary message).
 */
export function decideTypedAnswer(
  open: readonly PromptState[],
  text: string,
): { row: PromptState; collected: Record<string, string> } | undefined {
  const row = open.find((p) => p.kind === 'question');
  if (!row) return undefined;
  const frame = row.payload as FrameOf<'question'>;
  const next = frame.questions.find((q) => row.answers[q.question] === undefined);
  if (!next) return undefined;
  return { row, collected: { ...row.answers, [next.question]: text } };
}
