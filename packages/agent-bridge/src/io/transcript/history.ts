/**
 * Recent exchanges for `/status`, built from the main session transcript (pure: transcript values in,
 * a bounded list out; the bridge persists it next to the transcript cursors).
 *
 * Why the transcript and not stdout: stdout carries the assistant's text but never the user's (a message
 * written to stdin is not echoed, and a steer leaves no trace there at all), while the transcript records
 * every message the CLI took, as written — so it is the one place where both sides of an exchange
 * appear, in the order the CLI took them, and it is still there after a bridge restart.
 *
 * What counts (2.1.328; see test/fixtures/README.md):
 * - user: a message the bridge wrote (its text starts with Switchyard's header, which is stripped), where
 *   the transcript has its text: the `user` line that opens a turn, or for a steer the `attachment`
 *   `queued_command` written when the running turn takes it. The `queue-operation` `enqueue` line is not
 *   used for these: it has no content at all for a content-array message (what the bridge writes), and
 *   repeats the `user` line for a string one. It is used for slash commands (`/clear`, `/compact`), whose
 *   `user` lines are rewritten as `<command-name>` markup. Anything without the header — the
 *   `<task-notification>` the CLI queues for itself after a background sub-agent — was said by no one.
 * - assistant: `assistant` lines of the main agent with text blocks, except the CLI's own error messages
 *   (`isApiErrorMessage`, or the `<synthetic>` model): their text names the API host and is kept out of
 *   chats (see `session.ts`). Consecutive assistant texts (preamble, tools, conclusion) make one entry.
 *
 * Bounds: at most {@link HISTORY_KEPT} entries of at most {@link HISTORY_TEXT_CHARS} characters each.
 *
 * Duplicates: each transcript line is handled once (cursors persisted with the list). Should a session
 * file be rewritten with its old lines in it, an entry with the same role and timestamp as a kept one and
 * text it already holds is dropped rather than shown twice. Timestamps are not used to order entries:
 * entries stay in the order the CLI wrote their lines.
 */
import { cutEnd } from '@switchyard/card';
import type { FrameOf } from '@switchyard/protocol';
import { stripMessageHeader } from '../delivery/user-input.js';

/** One entry of the `status` frame's `history`. */
export type HistoryEntry = NonNullable<FrameOf<'status'>['history']>[number];

/** Entries kept (and sent with every `status` answer). */
export const HISTORY_KEPT = 12;
/** Characters kept of each text; longer ones end in `…`. */
export const HISTORY_TEXT_CHARS = 300;

/**
 * The cheap pre-test for {@link historyEntryOf}: whether a raw transcript line (its text, or its bytes
 * before decoding) can matter. Lines that fail it are not decoded or parsed at all: most of a
 * transcript's bytes are attachments and API request records.
 */
export function mayBeHistory(text: string | Buffer): boolean {
  return (
    text.includes('"type":"assistant"') ||
    text.includes('[telegram ') ||
    text.includes('"operation":"enqueue"')
  );
}

/**
 * The history entry a main-transcript line makes, if any; stamped with the line's own `timestamp`, or
 * `now` (the caller's clock) for a line without one.
 */
export function historyEntryOf(value: Record<string, unknown>, now: number): HistoryEntry | undefined {
  const parsed = typeof value.timestamp === 'string' ? Date.parse(value.timestamp) : Number.NaN;
  const at = Number.isNaN(parsed) ? now : parsed;
  const user = (text: string | undefined): HistoryEntry | undefined =>
    text ? { role: 'user', text: cut(text), at } : undefined;
  if (value.type === 'queue-operation' && value.operation === 'enqueue') {
    return typeof value.content === 'string' && value.content.startsWith('/')
      ? user(value.content.trim())
      : undefined;
  }
  if (value.type === 'user' && value.isSidechain !== true) {
    const content = textOf((value.message as { content?: unknown } | undefined)?.content);
    return content === undefined ? undefined : user(stripMessageHeader(content)?.trim());
  }
  if (value.type === 'attachment') {
    const attachment = value.attachment as { type?: unknown; prompt?: unknown } | undefined;
    if (attachment?.type !== 'queued_command') return undefined;
    const content = textOf(attachment.prompt);
    return content === undefined ? undefined : user(stripMessageHeader(content)?.trim());
  }
  if (value.type === 'assistant' && value.isSidechain !== true && value.isApiErrorMessage !== true) {
    const message = value.message as { model?: unknown; content?: unknown } | undefined;
    if (!message || message.model === '<synthetic>' || !Array.isArray(message.content)) return undefined;
    const text = message.content
      .flatMap((block: { type?: unknown; text?: unknown }) =>
        block?.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
      )
      .join('\n')
      .trim();
    return text ? { role: 'assistant', text: cut(text), at } : undefined;
  }
  return undefined;
}

/**
 * Adds an entry to `history` (in place, oldest first) and returns it: merged into the previous entry
 * when both are the assistant's, dropped when already there (see "Duplicates"), the oldest dropped past
 * {@link HISTORY_KEPT}.
 */
export function addHistory(history: HistoryEntry[], entry: HistoryEntry): HistoryEntry[] {
  const body = entry.text.endsWith('…') ? entry.text.slice(0, -1) : entry.text;
  if (history.some((kept) => kept.role === entry.role && kept.at === entry.at && kept.text.startsWith(body)))
    return history;
  const last = history.at(-1);
  if (last?.role === 'assistant' && entry.role === 'assistant') {
    // One reply, one entry: keeps the reply's start time; a reply already cut stays as it is.
    if (!last.text.endsWith('…') && !last.text.includes(body))
      last.text = cut(`${last.text}\n\n${entry.text}`);
    return history;
  }
  history.push(entry);
  if (history.length > HISTORY_KEPT) history.splice(0, history.length - HISTORY_KEPT);
  return history;
}

/** A message's text: a string, or the text blocks of a content array (images left out). */
export function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((block: { type?: unknown; text?: unknown }) =>
    block?.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
  );
  return texts.length > 0 ? texts.join('\n') : undefined;
}

function cut(text: string): string {
  return cutEnd(text, HISTORY_TEXT_CHARS);
}
