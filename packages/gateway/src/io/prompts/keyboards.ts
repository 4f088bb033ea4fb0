/**
 * Permission prompts and `AskUserQuestion` as inline keyboards.
 *
 * `callback_data` carries only a kind letter, a 16-character token and small indexes (well under
 * Telegram's 64 bytes); everything else about the prompt lives in SQLite under that token. A press is
 * honoured once: the prompt row moves from `open` to `answered` in one statement, and a second press,
 * or a press after the bridge closed the prompt, is answered "this request has expired".
 */
import { cutEnd, cutMiddle, escapeHtml, visibleText } from '@switchyard/card';
import { type FrameOf, PROMPT_SUMMARY_MAX } from '@switchyard/protocol';
import type { InlineKeyboardMarkup } from 'grammy/types';
import type { ButtonPress } from '../../core/prompts/prompt-press.js';

/** Telegram's limit on `callback_data`, in bytes. */
export const CALLBACK_DATA_LIMIT = 64;

/**
 * A decoded button press. A permission press with `suggestion` applies that one suggestion (a mode
 * change, an added directory, any kind other than rules); `allow_always` without it applies the
 * `addRules` suggestions the prompt's text lists.
 */
export type { ButtonPress };

const DECISION = { a: 'allow', A: 'allow_always', d: 'deny' } as const;
const DECISION_CODE = { allow: 'a', allow_always: 'A', deny: 'd' } as const;

/** Encodes a press; the result is at most 40 bytes. */
export function encodePress(press: ButtonPress): string {
  const data =
    press.kind === 'permission'
      ? press.suggestion !== undefined
        ? `p:${press.token}:s${press.suggestion}`
        : `p:${press.token}:${DECISION_CODE[press.decision]}`
      : press.kind === 'option'
        ? `q:${press.token}:${press.question}:${press.option}`
        : `q:${press.token}:${press.question}:d`;
  if (Buffer.byteLength(data) >= CALLBACK_DATA_LIMIT)
    throw new Error(`callback data too long: ${data.length}`);
  return data;
}

/** Decodes `callback_data`; undefined for anything this gateway did not make. */
export function decodePress(data: string | undefined): ButtonPress | undefined {
  if (!data) return undefined;
  const parts = data.split(':');
  const token = parts[1];
  if (!token || !/^[0-9a-f]{16}$/.test(token)) return undefined;
  if (parts[0] === 'p' && parts.length === 3) {
    const one = /^s(\d{1,2})$/.exec(parts[2] ?? '');
    if (one) {
      const suggestion = Number(one[1]);
      return suggestion < 20
        ? { kind: 'permission', token, decision: 'allow_always', suggestion }
        : undefined;
    }
    const decision = DECISION[parts[2] as keyof typeof DECISION];
    return decision ? { kind: 'permission', token, decision } : undefined;
  }
  if (parts[0] === 'q' && parts.length === 4) {
    const question = Number(parts[2]);
    if (!Number.isInteger(question) || question < 0 || question > 20) return undefined;
    if (parts[3] === 'd') return { kind: 'done', token, question };
    const option = Number(parts[3]);
    if (!Number.isInteger(option) || option < 0 || option > 50) return undefined;
    return { kind: 'option', token, question, option };
  }
  return undefined;
}

/** Room for the list of what "always allow" adds, so the whole prompt stays under Telegram's 4096. */
const SUGGESTION_TEXT_BUDGET = 2300;

/**
 * What each button of a permission prompt applies, decided once for the text and the keyboard:
 * `always` are the indexes of the `addRules` suggestions (one "Always allow" button applies them all,
 * and the text lists every one), `separate` those of every other kind (a mode change, an added
 * directory, …), each on its own button. A list too long to show in full is not offered at all:
 * nothing is applied that was not shown.
 */
export function permissionChoices(frame: FrameOf<'permission_request'>): {
  always: number[];
  separate: number[];
} {
  const always: number[] = [];
  const separate: number[] = [];
  frame.suggestions.forEach((s, i) => {
    (s.kind === 'addRules' ? always : separate).push(i);
  });
  const length = (indexes: number[]) =>
    indexes.reduce((sum, i) => sum + suggestionWords(frame.suggestions[i]).length + 8, 0);
  if (length(always) + length(separate) > SUGGESTION_TEXT_BUDGET) return { always: [], separate: [] };
  return { always, separate };
}

/** Longer button texts are cut by Telegram's clients: such a choice is spelled out in the text instead. */
const BUTTON_TEXT_MAX = 64;

/**
 * The longest text a button keeps beside two others: a row's buttons share its width, and a phone cuts
 * a longer one ("♾ Always allow (this …"). A longer choice gets a row of its own, as the extra ones do.
 */
const SHARED_ROW_TEXT_MAX = 16;

type Suggestion = FrameOf<'permission_request'>['suggestions'][number];

/** A suggestion in words, with where it applies: "allow all edits from now on (this conversation)". */
function suggestionWords(s: Suggestion | undefined): string {
  if (!s) return '';
  return s.where ? `${s.label} (${s.where})` : s.label;
}

/**
 * The prompt's first line: what the tool will do, as the bridge put it ("write hello.md (/w/hello.md)"),
 * shown whole — whitespace runs collapsed, invisible characters made visible, and a summary over
 * {@link PROMPT_SUMMARY_MAX} cut in the middle with the count of what is not shown (the bridge does so
 * already; this holds whatever sent the frame to it).
 */
export function permissionTitle(frame: FrameOf<'permission_request'>): string {
  return `🔐 Claude wants to ${escapeHtml(cutMiddle(visibleText(frame.summary), PROMPT_SUMMARY_MAX))}`;
}

/** The text and keyboard of a permission prompt. */
export function permissionPrompt(
  frame: FrameOf<'permission_request'>,
  token: string,
): { html: string; keyboard: InlineKeyboardMarkup } {
  const lines = [permissionTitle(frame)];
  if (frame.fullInput !== undefined)
    lines.push('<i>📎 Not all of it fits here: the whole input is in input.json, just above.</i>');
  const { always, separate } = permissionChoices(frame);
  const words = (i: number) => suggestionWords(frame.suggestions[i]);
  if (always.length > 0) {
    lines.push('<i>♾ Always allow adds:</i>', ...always.map((i) => `• ${escapeHtml(words(i))}`));
  }
  // One place for every rule: the button says it when all of them apply there.
  const places = new Set(always.map((i) => frame.suggestions[i]?.where));
  const place = places.size === 1 ? [...places][0] : undefined;
  const placed = place ? `♾ Always allow (${place})` : '♾ Always allow';
  const alwaysText = placed.length <= BUTTON_TEXT_MAX ? placed : '♾ Always allow';
  const allowButton = {
    text: '✅ Allow',
    callback_data: encodePress({ kind: 'permission', token, decision: 'allow' }),
  };
  const alwaysButton = {
    text: alwaysText,
    callback_data: encodePress({ kind: 'permission', token, decision: 'allow_always' }),
  };
  const denyButton = {
    text: '⛔ Deny',
    callback_data: encodePress({ kind: 'permission', token, decision: 'deny' }),
  };
  const shared = always.length > 0 && alwaysText.length <= SHARED_ROW_TEXT_MAX;
  const main = [
    shared ? [allowButton, alwaysButton, denyButton] : [allowButton, denyButton],
    ...(always.length > 0 && !shared ? [[alwaysButton]] : []),
  ];
  let listed = 0;
  const extra = separate.map((i) => {
    let text = `✅ Allow, and ${words(i)}`;
    if (text.length > BUTTON_TEXT_MAX) {
      listed += 1;
      lines.push(`<i>(${listed}) ${escapeHtml(words(i))}</i>`);
      text = `✅ Allow, and (${listed}) above`;
    }
    return [
      {
        text,
        callback_data: encodePress({ kind: 'permission', token, decision: 'allow_always', suggestion: i }),
      },
    ];
  });
  return { html: lines.join('\n'), keyboard: { inline_keyboard: [...main, ...extra] } };
}

/** How a permission answer is shown once chosen. */
export function permissionAnswered(
  frame: FrameOf<'permission_request'>,
  decision: ButtonPress & { kind: 'permission' },
): string {
  const chosen = decision.suggestion !== undefined ? frame.suggestions[decision.suggestion] : undefined;
  const word = chosen
    ? `✅ Allowed, and ${escapeHtml(suggestionWords(chosen))}`
    : { allow: '✅ Allowed', allow_always: '♾ Always allowed', deny: '⛔ Denied' }[decision.decision];
  return `${permissionTitle(frame)}\n${word}`;
}

/**
 * How much of an answer a question prompt repeats once answered: the whole answer went to the agent, and
 * a long typed one beside a long question would take the message past Telegram's 4096 characters.
 */
export const ANSWER_ECHO_LIMIT = 300;

/** The text and keyboard of a question prompt, with the current multi-select toggles ticked. */
export function questionPrompt(
  frame: FrameOf<'question'>,
  token: string,
  selection: Record<string, number[]>,
  answered: Record<string, string>,
): { html: string; keyboard: InlineKeyboardMarkup } {
  const lines: string[] = [];
  const rows: InlineKeyboardMarkup['inline_keyboard'] = [];
  frame.questions.forEach((q, qi) => {
    const header = q.header ? `<b>${escapeHtml(q.header)}</b> ` : '';
    lines.push(`❓ ${header}${escapeHtml(q.question)}`);
    for (const option of q.options) {
      if (option.description)
        lines.push(`  • <b>${escapeHtml(option.label)}</b> — ${escapeHtml(option.description)}`);
    }
    const answer = answered[q.question];
    if (answer !== undefined) {
      const echo = cutEnd(answer, ANSWER_ECHO_LIMIT + 1);
      lines.push(`→ ${escapeHtml(echo)}`);
      return;
    }
    const chosen = new Set(selection[String(qi)] ?? []);
    q.options.forEach((option, oi) => {
      const mark = q.multiSelect ? (chosen.has(oi) ? '☑ ' : '☐ ') : '';
      rows.push([
        {
          text: cutEnd(`${mark}${option.label}`, 60),
          callback_data: encodePress({ kind: 'option', token, question: qi, option: oi }),
        },
      ]);
    });
    if (q.multiSelect)
      rows.push([{ text: 'Done', callback_data: encodePress({ kind: 'done', token, question: qi }) }]);
  });
  lines.push('<i>Or type your own answer.</i>');
  return { html: lines.join('\n'), keyboard: { inline_keyboard: rows } };
}
