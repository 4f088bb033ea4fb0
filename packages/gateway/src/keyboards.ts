/**
 * Permission prompts and `AskUserQuestion` as inline keyboards.
 *
 * `callback_data` carries only a kind letter, a 16-character token and small indexes (well under
 * Telegram's 64 bytes); everything else about the prompt lives in SQLite under that token. A press is
 * honoured once: the prompt row moves from `open` to `answered` in one statement, and a second press,
 * or a press after the bridge closed the prompt, is answered "this request has expired".
 */
import { escapeHtml } from '@switchyard/card';
import type { FrameOf } from '@switchyard/protocol';
import type { InlineKeyboardMarkup } from 'grammy/types';

/** Telegram's limit on `callback_data`, in bytes. */
export const CALLBACK_DATA_LIMIT = 64;

/** A decoded button press. */
export type ButtonPress =
  | { kind: 'permission'; token: string; decision: 'allow' | 'allow_always' | 'deny' }
  | { kind: 'option'; token: string; question: number; option: number }
  | { kind: 'done'; token: string; question: number };

const DECISION = { a: 'allow', A: 'allow_always', d: 'deny' } as const;
const DECISION_CODE = { allow: 'a', allow_always: 'A', deny: 'd' } as const;

/** Encodes a press; the result is at most 40 bytes. */
export function encodePress(press: ButtonPress): string {
  const data =
    press.kind === 'permission'
      ? `p:${press.token}:${DECISION_CODE[press.decision]}`
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

/** The text and keyboard of a permission prompt. */
export function permissionPrompt(
  frame: FrameOf<'permission_request'>,
  token: string,
): { html: string; keyboard: InlineKeyboardMarkup } {
  const lines = [
    `🔐 <b>${escapeHtml(frame.toolName)}</b> wants to:`,
    escapeHtml(frame.summary.slice(0, 1500)),
  ];
  const always = frame.suggestions[0];
  if (always) lines.push(`<i>Always allow: ${escapeHtml(always.label.slice(0, 200))}</i>`);
  const row = [
    { text: '✅ Allow', callback_data: encodePress({ kind: 'permission', token, decision: 'allow' }) },
    ...(always
      ? [
          {
            text: '♾ Always allow',
            callback_data: encodePress({ kind: 'permission', token, decision: 'allow_always' }),
          },
        ]
      : []),
    { text: '⛔ Deny', callback_data: encodePress({ kind: 'permission', token, decision: 'deny' }) },
  ];
  return { html: lines.join('\n'), keyboard: { inline_keyboard: [row] } };
}

/** How a permission answer is shown once chosen. */
export function permissionAnswered(
  frame: FrameOf<'permission_request'>,
  decision: ButtonPress & { kind: 'permission' },
): string {
  const word = { allow: '✅ Allowed', allow_always: '♾ Always allowed', deny: '⛔ Denied' }[
    decision.decision
  ];
  return `🔐 <b>${escapeHtml(frame.toolName)}</b>: ${escapeHtml(frame.summary.slice(0, 1500))}\n${word}`;
}

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
      lines.push(`→ ${escapeHtml(answer)}`);
      return;
    }
    const chosen = new Set(selection[String(qi)] ?? []);
    q.options.forEach((option, oi) => {
      const mark = q.multiSelect ? (chosen.has(oi) ? '☑ ' : '☐ ') : '';
      rows.push([
        {
          text: `${mark}${option.label}`.slice(0, 60),
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
