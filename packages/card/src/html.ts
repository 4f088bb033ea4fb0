/**
 * Telegram HTML, the little of it the card emits. Telegram's `parse_mode: HTML` accepts a fixed set of
 * tags and the entities `&lt; &gt; &amp; &quot;`; anything else is rejected with a 400, which would
 * cost the card an edit. So every string that came from the model, a tool or the user passes through
 * {@link escapeHtml}, and the renderer only ever writes the tags in {@link CARD_TAGS}.
 */

/** The tags Telegram's HTML parse mode accepts (the card itself writes only `b`, `i` and `code`). */
export const TELEGRAM_TAGS = [
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'span',
  'tg-spoiler',
  'a',
  'code',
  'pre',
  'blockquote',
  'tg-emoji',
] as const;

/**
 * The HTML tags Telegram's rich Markdown accepts inline (`<u>`, `<details>`, …); any other `<` is text
 * there. Written once here, beside the HTML parse mode's list, for every writer of rich Markdown.
 */
export const RICH_MARKDOWN_TAGS = [
  'a',
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'code',
  'mark',
  'sub',
  'sup',
  'tg-spoiler',
  'tg-emoji',
  'tg-time',
  'tg-math',
  'tg-reference',
  'br',
  'details',
  'summary',
  'blockquote',
  'aside',
  'cite',
  'pre',
] as const;

/** The tags the card's renderer writes. A subset of {@link TELEGRAM_TAGS}. */
export const CARD_TAGS = ['b', 'i', 'code'] as const satisfies readonly (typeof TELEGRAM_TAGS)[number][];

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

/** Escapes text for Telegram HTML. Safe for text content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  // Most labels need no escaping; testing first skips the allocation (the renderer's hot path).
  return NEEDS_ESCAPE.test(text) ? text.replace(ALL_SPECIALS, (ch) => ESCAPES[ch] ?? ch) : text;
}

const NEEDS_ESCAPE = /[&<>"]/;
const ALL_SPECIALS = /[&<>"]/g;

/** `<tag>escaped text</tag>`. */
export function tag(name: (typeof CARD_TAGS)[number], text: string): string {
  return `<${name}>${escapeHtml(text)}</${name}>`;
}
