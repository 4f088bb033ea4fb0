/**
 * Shortening untrusted text for one line of the card. Cutting happens on raw text, before escaping, so
 * an HTML entity is never split; surrogate pairs are never split either, so no lone half of an emoji
 * reaches Telegram (which rejects invalid UTF-16 in some clients).
 */

const ELLIPSIS = '…';

/** Collapses whitespace runs (newlines included) to single spaces and trims. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Drops a trailing high surrogate left by a cut at `end`. */
function safeSlice(text: string, start: number, end: number): string {
  let e = end;
  const code = text.charCodeAt(e - 1);
  if (e > start && code >= 0xd800 && code <= 0xdbff) e -= 1;
  let s = start;
  const first = text.charCodeAt(s);
  if (s < e && first >= 0xdc00 && first <= 0xdfff) s += 1;
  return text.slice(s, e);
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
