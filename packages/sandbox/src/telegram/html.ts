/**
 * Telegram's HTML parse mode, both ways: {@link parseTelegramHtml} turns `parse_mode: "HTML"` text into
 * plain text plus entities with the same acceptance rules and error texts as Telegram's own parser
 * (tdlib's `parse_html`), and {@link renderTelegramHtml} turns text plus entities back into that HTML
 * subset for display. Pure functions; offsets are in UTF-16 code units as in the Bot API, error
 * positions in UTF-8 bytes as in Telegram's messages.
 */
import type { WireMessageEntity } from './wire.js';

/** The outcome of parsing: the text a user sees and its entities, or Telegram's reason for refusing. */
export type HtmlParseResult =
  | { ok: true; text: string; entities: WireMessageEntity[] }
  | { ok: false; error: string };

/** The tags Telegram accepts (https://core.telegram.org/bots/api#html-style). */
const SUPPORTED_TAGS = new Set([
  'a',
  'b',
  'strong',
  'i',
  'em',
  's',
  'strike',
  'del',
  'u',
  'ins',
  'tg-spoiler',
  'tg-emoji',
  'span',
  'pre',
  'code',
  'blockquote',
]);

/** Entity type for tags whose entity does not depend on attributes. */
const SIMPLE_TAG_ENTITY = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
} as const satisfies Record<string, string>;

interface OpenTag {
  name: string;
  /** href, code language, span class (without `tg-`), emoji id, or `expandable` for blockquotes. */
  argument: string;
  offset: number;
}

const isSpace = (c: string | undefined): boolean =>
  c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';
const isNameChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9.-]/.test(c);

/** Decodes the character reference at `input[at] === '&'`; undefined when it is a literal ampersand. */
function decodeEntity(input: string, at: number): { char: string; end: number } | undefined {
  const semicolon = input.indexOf(';', at + 1);
  if (semicolon < 0 || semicolon - at > 10) return undefined;
  const body = input.slice(at + 1, semicolon);
  const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
  const plain = named[body];
  if (plain !== undefined) return { char: plain, end: semicolon + 1 };
  const numeric = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(body);
  if (!numeric) return undefined;
  const code = numeric[1] !== undefined ? Number.parseInt(numeric[1], 16) : Number(numeric[2]);
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
  return { char: String.fromCodePoint(code), end: semicolon + 1 };
}

/**
 * Parses Telegram HTML. Accepts exactly what Telegram accepts: the supported tags (case-insensitive),
 * quoted or bare attribute values, `&lt; &gt; &amp; &quot;` and numeric character references (any other
 * `&` is literal), and an end tag with an empty name (`</>`). Empty entities are dropped, as Telegram
 * does. Unsupported tags, stray or mismatched end tags and unclosed tags are refused with Telegram's
 * texts (without the "Bad Request: can't parse entities: " prefix, which the caller adds).
 */
export function parseTelegramHtml(html: string): HtmlParseResult {
  const byteOffset = (index: number): number => Buffer.byteLength(html.slice(0, index));
  const fail = (error: string): HtmlParseResult => ({ ok: false, error });
  const open: OpenTag[] = [];
  const entities: WireMessageEntity[] = [];
  let text = '';
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === '&') {
      const decoded = decodeEntity(html, i);
      if (decoded) {
        text += decoded.char;
        i = decoded.end;
        continue;
      }
    }
    if (c !== '<') {
      text += c;
      i++;
      continue;
    }
    const begin = i;
    i++;
    if (html[i] !== '/') {
      while (i < html.length && !isSpace(html[i]) && html[i] !== '>') i++;
      if (i >= html.length) return fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
      const name = html.slice(begin + 1, i).toLowerCase();
      if (!SUPPORTED_TAGS.has(name)) {
        return fail(`Unsupported start tag "${name}" at byte offset ${byteOffset(begin)}`);
      }
      let argument = '';
      while (html[i] !== '>') {
        while (i < html.length && isSpace(html[i])) i++;
        if (html[i] === '>') break;
        const attributeStart = i;
        while (i < html.length && !isSpace(html[i]) && html[i] !== '=' && html[i] !== '>') i++;
        const attribute = html.slice(attributeStart, i).toLowerCase();
        if (attribute === '') {
          return fail(`Empty attribute name in the tag "${name}" at byte offset ${byteOffset(begin)}`);
        }
        while (i < html.length && isSpace(html[i])) i++;
        if (html[i] !== '=') {
          if (name === 'blockquote' && attribute === 'expandable') {
            argument = 'expandable';
            continue;
          }
          if (i >= html.length) return fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
          return fail(
            `Expected equal sign in declaration of an attribute of the tag "${name}" at byte offset ${byteOffset(begin)}`,
          );
        }
        i++;
        while (i < html.length && isSpace(html[i])) i++;
        if (i >= html.length) return fail(`Unclosed start tag "${name}" at byte offset ${byteOffset(begin)}`);
        let value = '';
        const quote = html[i];
        if (quote !== '"' && quote !== "'") {
          const tokenStart = i;
          while (isNameChar(html[i])) i++;
          value = html.slice(tokenStart, i).toLowerCase();
          if (!isSpace(html[i]) && html[i] !== '>') {
            return fail(`Unexpected end of name token at byte offset ${byteOffset(tokenStart)}`);
          }
        } else {
          i++;
          while (i < html.length && html[i] !== quote) {
            if (html[i] === '&') {
              const decoded = decodeEntity(html, i);
              if (decoded) {
                value += decoded.char;
                i = decoded.end;
                continue;
              }
            }
            value += html[i];
            i++;
          }
          if (html[i] === quote) i++;
        }
        if (i >= html.length) return fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
        if (name === 'a' && attribute === 'href') argument = value;
        else if (name === 'code' && attribute === 'class' && value.startsWith('language-')) {
          argument = value.slice('language-'.length);
        } else if (name === 'span' && attribute === 'class' && value.startsWith('tg-')) {
          argument = value.slice('tg-'.length);
        } else if (name === 'tg-emoji' && attribute === 'emoji-id') argument = value;
      }
      if (name === 'span' && argument !== 'spoiler') {
        return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(begin)}`);
      }
      open.push({ name, argument, offset: text.length });
      i++;
      continue;
    }
    // An end tag.
    const top = open.at(-1);
    if (!top) return fail(`Unexpected end tag at byte offset ${byteOffset(begin)}`);
    i++;
    const nameStart = i;
    while (i < html.length && !isSpace(html[i]) && html[i] !== '>') i++;
    const endName = html.slice(nameStart, i).toLowerCase();
    while (i < html.length && isSpace(html[i])) i++;
    if (html[i] !== '>') return fail(`Unclosed end tag at byte offset ${byteOffset(begin)}`);
    if (endName !== '' && endName !== top.name) {
      return fail(
        `Unmatched end tag at byte offset ${byteOffset(begin)}, expected "</${top.name}>", found "</${endName}>"`,
      );
    }
    i++;
    open.pop();
    const closed = closeTag(top, text, entities);
    if (closed !== undefined) return fail(closed);
  }
  const unclosed = open.at(-1);
  if (unclosed) return fail(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { ok: true, text, entities: normaliseCode(entities) };
}

/** Adds the entity for a closed tag; returns an error text when the tag's content is unacceptable. */
function closeTag(tag: OpenTag, text: string, entities: WireMessageEntity[]): string | undefined {
  const offset = tag.offset;
  const length = text.length - offset;
  if (length === 0) return undefined;
  const last = entities.at(-1);
  const sameSpan = last !== undefined && last.offset === offset && last.length === length;
  switch (tag.name) {
    case 'a': {
      const url = tag.argument || text.slice(offset);
      if (/^[a-z][a-z0-9+.-]*:/i.test(url) || /^[\w-]+(\.[\w-]+)+/.test(url)) {
        entities.push({ type: 'text_link', offset, length, url });
      }
      return undefined;
    }
    case 'pre':
      if (sameSpan && last.type === 'code' && last.language !== undefined) {
        last.type = 'pre';
      } else {
        entities.push({ type: 'pre', offset, length });
      }
      return undefined;
    case 'code':
      if (sameSpan && last.type === 'pre' && tag.argument !== '') {
        last.language = tag.argument;
      } else if (tag.argument !== '') {
        entities.push({ type: 'code', offset, length, language: tag.argument });
      } else {
        entities.push({ type: 'code', offset, length });
      }
      return undefined;
    case 'tg-emoji':
      if (!/^[0-9]{1,20}$/.test(tag.argument)) return 'Invalid custom emoji identifier specified';
      entities.push({ type: 'custom_emoji', offset, length, custom_emoji_id: tag.argument });
      return undefined;
    case 'blockquote':
      entities.push({
        type: tag.argument === 'expandable' ? 'expandable_blockquote' : 'blockquote',
        offset,
        length,
      });
      return undefined;
    default: {
      const type = SIMPLE_TAG_ENTITY[tag.name as keyof typeof SIMPLE_TAG_ENTITY];
      entities.push({ type, offset, length });
      return undefined;
    }
  }
}

/** A `code` entity has no language in the Bot API; only `pre` keeps the one its inner `code` named. */
function normaliseCode(entities: WireMessageEntity[]): WireMessageEntity[] {
  return entities.map((e) => {
    if (e.type !== 'code' || e.language === undefined) return e;
    const { language: _language, ...rest } = e;
    return rest;
  });
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function openTagFor(e: WireMessageEntity): [open: string, close: string] | undefined {
  switch (e.type) {
    case 'bold':
      return ['<b>', '</b>'];
    case 'italic':
      return ['<i>', '</i>'];
    case 'underline':
      return ['<u>', '</u>'];
    case 'strikethrough':
      return ['<s>', '</s>'];
    case 'spoiler':
      return ['<tg-spoiler>', '</tg-spoiler>'];
    case 'code':
      return ['<code>', '</code>'];
    case 'pre':
      return e.language
        ? [`<pre><code class="language-${escapeHtml(e.language)}">`, '</code></pre>']
        : ['<pre>', '</pre>'];
    case 'text_link':
      return [`<a href="${escapeHtml(e.url ?? '')}">`, '</a>'];
    case 'text_mention':
      return [`<a href="tg://user?id=${e.user?.id ?? 0}">`, '</a>'];
    case 'blockquote':
      return ['<blockquote>', '</blockquote>'];
    case 'expandable_blockquote':
      return ['<blockquote expandable>', '</blockquote>'];
    case 'custom_emoji':
      return [`<tg-emoji emoji-id="${escapeHtml(e.custom_emoji_id ?? '')}">`, '</tg-emoji>'];
    default:
      return undefined; // bot_command, url, mention …: shown as plain text
  }
}

/**
 * Renders text plus entities as Telegram HTML (the form `parse_mode: "HTML"` accepts), escaping the
 * text. Entities must nest properly, as Telegram guarantees for the entities it returns; an entity that
 * would cross its parent's end is clipped there, so the output is always balanced.
 */
export function renderTelegramHtml(text: string, entities: readonly WireMessageEntity[]): string {
  const spans = entities
    .map((e) => ({ e, tags: openTagFor(e) }))
    .filter((s): s is { e: WireMessageEntity; tags: [string, string] } => s.tags !== undefined)
    .sort((a, b) => a.e.offset - b.e.offset || b.e.length - a.e.length);
  let out = '';
  const stack: { end: number; close: string }[] = [];
  let cursor = 0;
  const closeUntil = (position: number): void => {
    for (let top = stack.at(-1); top && top.end <= position; top = stack.at(-1)) {
      out += escapeHtml(text.slice(cursor, top.end)) + top.close;
      cursor = top.end;
      stack.pop();
    }
  };
  for (const { e, tags } of spans) {
    closeUntil(e.offset);
    out += escapeHtml(text.slice(cursor, e.offset)) + tags[0];
    cursor = e.offset;
    const parentEnd = stack.at(-1)?.end ?? text.length;
    stack.push({ end: Math.min(e.offset + e.length, parentEnd), close: tags[1] });
  }
  closeUntil(text.length);
  return out + escapeHtml(text.slice(cursor));
}
