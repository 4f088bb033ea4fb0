/**
 * Shortening untrusted text: one line of the card, a permission prompt, a label on the wire. Cutting
 * happens on raw text, before escaping, so an HTML entity is never split; surrogate pairs are never
 * split either, so no lone half of an emoji reaches Telegram (which rejects invalid UTF-16 in some
 * clients). Every `.slice()` of text a user reads goes through {@link safeSlice} or a cut built on it.
 */

const ELLIPSIS = '…';

/** Collapses whitespace runs (newlines included) to single spaces and trims. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * `text.slice(start, end)` on whole characters: a cut that would leave half of a surrogate pair at either
 * end leaves the whole pair out instead, so the result is at most `end - start` units long.
 */
export function safeSlice(text: string, start: number, end: number = text.length): string {
  let e = Math.min(end, text.length);
  const code = text.charCodeAt(e - 1);
  if (e > start && code >= 0xd800 && code <= 0xdbff) e -= 1;
  let s = start;
  const first = text.charCodeAt(s);
  if (s < e && first >= 0xdc00 && first <= 0xdfff) s += 1;
  return text.slice(s, e);
}

/** `text` in at most `max` units, cut on a whole character, with an ellipsis when anything was cut. */
export function cutEnd(text: string, max: number): string {
  if (text.length <= max) return text;
  return max <= 1 ? (max === 1 ? ELLIPSIS : '') : `${safeSlice(text, 0, max - 1)}${ELLIPSIS}`;
}

/**
 * Fits `text` (already one line) into `max` UTF-16 units, cutting at the last word boundary when one is
 * near the end (within the last 40%), else mid-word, and marking the cut with an ellipsis.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return max === 1 ? ELLIPSIS : '';
  const room = max - 1;
  const space = text.lastIndexOf(' ', room);
  const end = space >= Math.floor(room * 0.6) ? space : room;
  return `${safeSlice(text, 0, end).trimEnd()}${ELLIPSIS}`;
}

/**
 * Fits a path into `max` units keeping its end (the file name matters most), cutting at a `/` when
 * possible: `/home/me/project/src/deep/file.ts` becomes `…/src/deep/file.ts`.
 */
export function cutPath(path: string, max: number): string {
  if (path.length <= max) return path;
  if (max <= 1) return max === 1 ? ELLIPSIS : '';
  const room = max - 1;
  const tail = path.length - room;
  const slash = path.indexOf('/', tail);
  const start = slash >= 0 && slash < path.length - 1 ? slash : tail;
  return `${ELLIPSIS}${safeSlice(path, start, path.length)}`;
}

/**
 * Text that is shown so a person can decide on it (a permission prompt): nothing in it may hide what
 * follows. Runs of spaces and tabs become one space and runs of blank lines one line break (padding
 * cannot push the end of a command out of view, and a line break, which separates shell commands,
 * stays visible); control characters and the invisible ones that reorder or hide text (bidi controls,
 * zero-width characters) are shown as `⟨U+202E⟩`.
 */
export function visibleText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n[\s]*/g, '\n')
    .replace(INVISIBLE, (ch) => `⟨U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}⟩`)
    .trim();
}

/**
 * Control and format characters (bidi controls, zero-width spaces, soft hyphens, …) other than the
 * line break and the zero-width joiner, which joins emoji and hides nothing.
 */
const INVISIBLE = /(?![\n\u200d])[\p{Cc}\p{Cf}]/gu;

/**
 * Fits `text` into `max` units keeping both ends: its head, a mark saying how many characters are not
 * shown, and its tail (the end of a command is where `; curl … | sh` hides). Counts are of characters
 * (code points) as a person reads them, and the cut never splits one.
 */
export function cutMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const budget = Math.max(0, max - middleMark(text.length).length);
  const head = safeSlice(text, 0, Math.ceil(budget * 0.6));
  const tail = safeSlice(text, text.length - (budget - head.length));
  const hidden = [...text].length - [...head].length - [...tail].length;
  return `${head}${middleMark(hidden)}${tail}`;
}

/** The mark {@link cutMiddle} puts where it cut; its length bounds the mark for any smaller count. */
function middleMark(hidden: number): string {
  return ` …[${hidden} more character${hidden === 1 ? '' : 's'}]… `;
}
