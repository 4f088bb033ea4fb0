/**
 * The model's Markdown (GitHub-flavoured, as Claude writes it) → Telegram's rich-message Markdown, and
 * the split of a long answer into rich messages.
 *
 * Telegram's rich Markdown is GFM where it can be — headings, lists, task lists, tables, fenced code,
 * quotes, footnotes, `<details>` pass through unchanged — so this module translates only where the two
 * dialects read the same characters differently. Each rule below names the difference it bridges; code
 * (fenced blocks and inline spans) is never touched, since both dialects take it verbatim.
 *
 * - `||x||` is a spoiler in Telegram, literal text in GFM (`a || b` in prose): `|` pairs are escaped.
 *   A table row (a line that starts with `|`) keeps its pipes: a cell cannot hold `||` unescaped in GFM.
 * - `==x==` is marked text in Telegram, literal in GFM (`a == b`): `=` pairs are escaped.
 * - `$…$` is a formula in Telegram; in prose Claude's `$` is nearly always money (`$5 to $10`), so a
 *   `$` followed by a digit is escaped. `$$…$$` and `$x$` that do not start with a digit stay formulas,
 *   as GitHub renders them.
 * - Telegram parses HTML tags it supports and refuses the rest, where GFM shows an unknown tag's text
 *   (`Vec<String>` in prose): a `<` that does not open a supported tag or an autolink is escaped.
 * - Links follow the one link policy of both paths (`links.ts`): an inline link or image whose
 *   target is not allowed keeps its text and loses the link, a reference definition to such a target is
 *   escaped (so no link can use it), an `<a>` tag with one is escaped to text; a link whose text names
 *   another host is followed by the host it goes to.
 * - GFM's single-tilde strikethrough (`~x~`) is plain text to Telegram, which reads only `~~x~~`; Claude
 *   writes `~` for "about" (`~5 s`), which GFM would strike through: it stays plain in both, unchanged.
 *
 * Pure: no I/O. Limits from the Bot API's "Rich Message Limits".
 */

import { RICH_MARKDOWN_TAGS } from '@switchyard/card';
import { destinationNote, linkAllowed } from './links.js';

/** Telegram's limit on a rich message's text, in characters (UTF-16 code units, as JavaScript counts). */
export const RICH_TEXT_LIMIT = 32_768;
/** Telegram's limit on a rich message's blocks (nested ones, list items and table rows included). */
export const RICH_BLOCK_LIMIT = 500;

/** HTML tags rich Markdown accepts inline (`<u>`, `<details>` …); any other `<` is text. */
const RICH_TAGS: ReadonlySet<string> = new Set(RICH_MARKDOWN_TAGS);

const FENCE = /^( {0,3})(`{3,}|~{3,})/;

/**
 * An inline link or image at the start of `text`: `[text](target "title")`, `![alt](target)`. The text
 * holds no unescaped bracket, the target balanced parentheses (as CommonMark allows one level deep).
 */
const INLINE_LINK =
  /^(!?)\[((?:[^[\]\\]|\\.)*)\]\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)(\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/;
/** A reference definition: `[label]: target` (a footnote's `[^1]: text` is not one). */
const DEFINITION = /^ {0,3}\[(?!\^)((?:[^[\]\\]|\\.)+)\]:\s*(<[^<>\n]*>|\S+)/;
/** The `href` of an `<a …>` tag. */
const ANCHOR_HREF = /^<a\s[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;

/** A link's target as written, without the angle brackets CommonMark allows around it. */
const target = (written: string): string =>
  written.startsWith('<') && written.endsWith('>') ? written.slice(1, -1) : written;

/** Translates one line of prose (outside fenced code) into rich Markdown; see the module comment. */
function translateLine(line: string): string {
  const definition = DEFINITION.exec(line);
  if (definition && !linkAllowed(target(definition[2] as string))) {
    const at = line.indexOf('[');
    return `${line.slice(0, at)}\\[${translateLine(line.slice(at + 1))}`;
  }
  const tableRow = /^\s*\|/.test(line);
  let out = '';
  let i = 0;
  while (i < line.length) {
    const ch = line[i] as string;
    if (ch === '[' || (ch === '!' && line[i + 1] === '[')) {
      const link = INLINE_LINK.exec(line.slice(i));
      if (link) {
        const [whole, bang = '', text = '', written = '', title = ''] = link;
        const href = target(written);
        out += linkAllowed(href)
          ? `${bang}[${translateLine(text)}](${written}${title})${destinationNote(text, href)}`
          : translateLine(text);
        i += whole.length;
        continue;
      }
    }
    if (ch === '\\' && i + 1 < line.length) {
      out += line.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (ch === '`') {
      // An inline code span: copied verbatim up to its closing run of the same length.
      const run = /^`+/.exec(line.slice(i))?.[0] ?? '`';
      const close = line.indexOf(run, i + run.length);
      if (close < 0) {
        out += run;
        i += run.length;
        continue;
      }
      out += line.slice(i, close + run.length);
      i = close + run.length;
      continue;
    }
    const next = line[i + 1];
    if (ch === '|' && next === '|' && !tableRow) {
      out += '\\|\\|';
      i += 2;
      continue;
    }
    if (ch === '=' && next === '=') {
      out += '\\=\\=';
      i += 2;
      continue;
    }
    if (ch === '$' && next !== undefined && /[0-9]/.test(next)) {
      out += '\\$';
      i += 1;
      continue;
    }
    if (ch === '<') {
      const tag = /^<\/?([a-zA-Z][a-zA-Z0-9-]*)[\s/>]/.exec(line.slice(i));
      const autolink = /^<(https?:|mailto:|tg:)[^\s>]*>/.test(line.slice(i));
      const anchor = ANCHOR_HREF.exec(line.slice(i));
      const badAnchor = anchor !== null && !linkAllowed(anchor[1] ?? anchor[2] ?? anchor[3] ?? '');
      if (badAnchor || (!autolink && !(tag && RICH_TAGS.has((tag[1] as string).toLowerCase())))) {
        out += '\\<';
        i += 1;
        continue;
      }
    }
    out += ch;
    i += 1;
  }
  return out;
}

/** Claude's Markdown as Telegram's rich Markdown reads it the same way; see the module comment. */
export function toRichMarkdown(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  const out: string[] = [];
  for (const line of lines) {
    const opener = FENCE.exec(line);
    if (fence !== undefined) {
      out.push(line);
      if (opener && (opener[2] as string)[0] === fence[0] && (opener[2] as string).length >= fence.length)
        fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener[2] as string;
      out.push(line);
      continue;
    }
    out.push(translateLine(line));
  }
  return out.join('\n');
}

/** A top-level block of Markdown source: the lines it spans, and how many rich blocks it counts as. */
interface SourceBlock {
  text: string;
  blocks: number;
}

/**
 * Cuts Markdown into its top-level blocks: a fenced code block is one, and otherwise blank lines
 * separate blocks. A block's count approximates Telegram's (list items, table rows and quote lines
 * count one each), so a split can keep each message under {@link RICH_BLOCK_LIMIT}.
 */
function sourceBlocks(markdown: string): SourceBlock[] {
  const blocks: SourceBlock[] = [];
  let current: string[] = [];
  let fence: string | undefined;
  const flush = (): void => {
    if (current.length === 0) return;
    const count = current.filter((l) => /^\s*([-*+]|\d+[.)]|\||>)\s?/.test(l)).length;
    blocks.push({ text: current.join('\n'), blocks: Math.max(1, count) });
    current = [];
  };
  for (const line of markdown.split('\n')) {
    const opener = FENCE.exec(line);
    if (fence !== undefined) {
      current.push(line);
      if (opener && (opener[2] as string)[0] === fence[0] && (opener[2] as string).length >= fence.length) {
        fence = undefined;
        flush();
      }
      continue;
    }
    if (opener) {
      flush();
      fence = opener[2] as string;
      current.push(line);
      continue;
    }
    if (line.trim().length === 0) flush();
    else current.push(line);
  }
  flush();
  return blocks;
}

/**
 * Splits rich Markdown into messages within Telegram's limits, cutting only between top-level blocks;
 * a single block over the limit (a huge code block) is cut at a line boundary, its fence re-opened.
 * Text up to the limits is returned whole: one message.
 */
export function splitRich(
  markdown: string,
  limit = RICH_TEXT_LIMIT,
  blockLimit = RICH_BLOCK_LIMIT,
): string[] {
  if (markdown.length <= limit && sourceBlocks(markdown).reduce((n, b) => n + b.blocks, 0) <= blockLimit)
    return [markdown];
  const parts: string[] = [];
  let text = '';
  let count = 0;
  const push = (): void => {
    if (text.length > 0) parts.push(text);
    text = '';
    count = 0;
  };
  for (const block of sourceBlocks(markdown)) {
    for (const piece of cutBlock(block.text, limit)) {
      const joined = text.length === 0 ? piece : `${text}\n\n${piece}`;
      if (joined.length > limit || count + block.blocks > blockLimit) {
        push();
        text = piece;
      } else text = joined;
      count += block.blocks;
    }
  }
  push();
  return parts;
}

/** One block cut into pieces of at most `limit` characters at line boundaries (fences re-opened). */
function cutBlock(block: string, limit: number): string[] {
  if (block.length <= limit) return [block];
  const opener = FENCE.exec(block);
  const fenceLine = opener ? (block.split('\n')[0] as string) : undefined;
  const fence = opener ? (opener[2] as string) : undefined;
  const lines = block.split('\n');
  const pieces: string[] = [];
  let current: string[] = [];
  let size = 0;
  const reserve = fence ? fence.length * 2 + (fenceLine?.length ?? 0) + 2 : 0;
  for (const line of lines) {
    // A line longer than the limit is cut by characters; rare (minified code), never mid-surrogate.
    const segments = line.length + reserve + 1 > limit ? chop(line, limit - reserve - 1) : [line];
    for (const segment of segments) {
      if (size + segment.length + 1 + reserve > limit && current.length > 0) {
        pieces.push(current.join('\n'));
        current = [];
        size = 0;
      }
      current.push(segment);
      size += segment.length + 1;
    }
  }
  if (current.length > 0) pieces.push(current.join('\n'));
  if (!fence || !fenceLine) return pieces;
  return pieces.map((piece, index) => {
    let p = piece;
    if (index > 0) p = `${fenceLine}\n${p}`;
    if (index < pieces.length - 1) p = `${p}\n${fence}`;
    return p;
  });
}

function chop(line: string, size: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < line.length) {
    let end = Math.min(line.length, i + Math.max(1, size));
    const code = line.charCodeAt(end - 1);
    if (end < line.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
    out.push(line.slice(i, end));
    i = end;
  }
  return out;
}
