/**
 * Rich messages (Bot API 10.1): the `markdown` form of `InputRichMessage`, checked against Telegram's
 * documented limits and refused the way Telegram refuses it, and rendered to HTML for the web view.
 *
 * Checked: at most 32,768 characters, 500 blocks, 20 table columns; HTML tags only from Telegram's
 * supported set (an unknown tag such as `<String>` is a parse error, where GFM would show it as text);
 * `<details>` balanced. Rendered: headings, paragraphs, fenced code, quotes, lists with task boxes,
 * tables, rules, `<details>`, footnote definitions, and inline bold, italic, strike, code, spoiler,
 * marked text and links; formulas are shown as their source. The `html` and `blocks` forms are refused
 * as unsupported by the sandbox: Switchyard sends Markdown.
 */
import { BotApiError } from './api-error.js';

/** Telegram's rich-message limits. */
export const RICH_LIMITS = { text: 32_768, blocks: 500, columns: 20 } as const;

/** Tags rich Markdown accepts (a subset of rich HTML: the inline ones and `<details>`). */
const TAGS = new Set([
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
  'tg-collage',
  'tg-slideshow',
]);

/** A checked rich message: its Markdown source and the HTML the web view shows. */
export interface RichContent {
  markdown: string;
  html: string;
}

const parseError = (why: string): BotApiError =>
  new BotApiError(400, `Bad Request: can't parse rich message: ${why}`);

/** Reads `rich_message` as Telegram would: Markdown only, within the limits, tags known. */
export function richContent(input: unknown): RichContent {
  const value = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (value.html !== undefined || value.blocks !== undefined)
    throw new BotApiError(400, 'Bad Request: the sandbox supports only the markdown form of rich_message');
  if (typeof value.markdown !== 'string') throw new BotApiError(400, 'Bad Request: rich message is empty');
  const markdown = value.markdown;
  if (markdown.trim().length === 0) throw new BotApiError(400, 'Bad Request: rich message is empty');
  if (markdown.length > RICH_LIMITS.text) throw new BotApiError(400, 'Bad Request: rich message is too long');
  return { markdown, html: renderRich(markdown) };
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Marks a piece of finished HTML inside text still to be rendered (a private-use character). */
const SLOT = '\uE000';
const SLOTS = new RegExp(`${SLOT}(\\d+)${SLOT}`, 'g');

/** Checks and renders one line's inline Markdown (outside code blocks). */
function inline(text: string): string {
  const slots: string[] = [];
  const keep = (html: string): string => `${SLOT}${slots.push(html) - 1}${SLOT}`;
  let s = text.replace(/\\([\\`*_{}[\]()#+\-.!|=$<>~])/g, (_, ch: string) => keep(escapeHtml(ch)));
  s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, __, code: string) =>
    keep(`<code>${escapeHtml(code.trim())}</code>`),
  );
  s = s.replace(/<(https?:[^\s>]+|mailto:[^\s>]+)>/g, (_, url: string) =>
    keep(`<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`),
  );
  for (const match of s.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9-]*)/g)) {
    const name = (match[1] as string).toLowerCase();
    if (!TAGS.has(name)) throw parseError(`unsupported tag <${match[1]}>`);
  }
  s = s.replace(/<(\/?)([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>/g, (_, slash: string, name: string) =>
    keep(`<${slash}${name.toLowerCase() === 'tg-spoiler' ? 'span' : name.toLowerCase()}>`),
  );
  s = escapeHtml(s);
  s = s
    .replace(/\[([^\]]+)\]\((https?:[^)\s]+|tg:[^)\s]+|mailto:[^)\s]+)\)/g, '<a href="$2">$1</a>')
    .replace(/\[\^([^\]]+)\]/g, '<sup>[$1]</sup>')
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '<b>$2</b>')
    .replace(/(\*|_)(?=\S)([\s\S]*?\S)\1/g, '<i>$2</i>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<s>$1</s>')
    .replace(/\|\|(?=\S)([\s\S]*?\S)\|\|/g, '<span class="spoiler">$1</span>')
    .replace(/==(?=\S)([\s\S]*?\S)==/g, '<mark>$1</mark>');
  return s.replace(SLOTS, (_, i: string) => slots[Number(i)] ?? '');
}

const cells = (line: string): string[] =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

/** Renders checked rich Markdown to HTML; throws Telegram's refusal for what it would not accept. */
export function renderRich(markdown: string): string {
  const lines = markdown.split('\n');
  const out: string[] = [];
  let blocks = 0;
  let details = 0;
  let i = 0;
  const block = (html: string, count = 1): void => {
    out.push(html);
    blocks += count;
  };
  while (i < lines.length) {
    const line = lines[i] as string;
    const fence = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] as string).trim().startsWith(fence[1] as string)) {
        body.push(lines[i] as string);
        i++;
      }
      i++;
      const lang = fence[2] ? ` class="language-${escapeHtml(fence[2])}"` : '';
      block(`<pre><code${lang}>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    if (line.trim().length === 0) {
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = (heading[1] as string).length;
      block(`<h${level}>${inline(heading[2] as string)}</h${level}>`);
      i++;
      continue;
    }
    if (/^\s*<details(\s+open)?\s*>/i.test(line)) {
      details++;
      const rest = line.replace(/^\s*<details(\s+open)?\s*>/i, '');
      const summary = /<summary>([\s\S]*?)<\/summary>/i.exec(rest);
      block(`<details><summary>${inline(summary?.[1] ?? 'Details')}</summary>`);
      i++;
      continue;
    }
    if (/^\s*<\/details>\s*$/i.test(line)) {
      if (details === 0) throw parseError('unexpected end tag </details>');
      details--;
      out.push('</details>');
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      block('<hr>');
      i++;
      continue;
    }
    if (/^\s*\|/.test(line) && /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(lines[i + 1] ?? '')) {
      const head = cells(line);
      if (head.length > RICH_LIMITS.columns) throw parseError('too many columns in a table');
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && /^\s*\|/.test(lines[i] as string)) {
        rows.push(cells(lines[i] as string));
        i++;
      }
      const th = head.map((c) => `<th>${inline(c)}</th>`).join('');
      const trs = rows.map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`).join('');
      block(`<table><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table>`, rows.length + 1);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quote: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i] as string)) {
        quote.push(inline((lines[i] as string).replace(/^\s*>\s?/, '')));
        i++;
      }
      block(`<blockquote>${quote.join('<br>')}</blockquote>`, quote.length);
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/;
    if (item.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: string[] = [];
      while (i < lines.length && item.test(lines[i] as string)) {
        let text = (lines[i] as string).replace(item, '');
        const task = /^\[( |x|X)\]\s+/.exec(text);
        let box = '';
        if (task) {
          box = `<input type="checkbox" disabled${task[1] === ' ' ? '' : ' checked'}> `;
          text = text.slice(task[0].length);
        }
        items.push(`<li>${box}${inline(text)}</li>`);
        i++;
      }
      const tag = ordered ? 'ol' : 'ul';
      block(`<${tag}>${items.join('')}</${tag}>`, items.length);
      continue;
    }
    const footnote = /^\[\^([^\]]+)\]:\s*(.*)$/.exec(line);
    if (footnote) {
      block(
        `<p class="footnote"><sup>[${escapeHtml(footnote[1] as string)}]</sup> ${inline(footnote[2] as string)}</p>`,
      );
      i++;
      continue;
    }
    const para: string[] = [];
    while (
      i < lines.length &&
      (lines[i] as string).trim().length > 0 &&
      !/^(#{1,6}\s|\s*>|\s*([-*+]|\d+[.)])\s|\s*\||\s*<\/?details| {0,3}(`{3,}|~{3,}))/i.test(
        lines[i] as string,
      )
    ) {
      para.push(inline(lines[i] as string));
      i++;
    }
    if (para.length === 0) {
      para.push(inline(line));
      i++;
    }
    block(`<p>${para.join('<br>')}</p>`);
  }
  if (details > 0) throw parseError('unclosed tag <details>');
  if (blocks > RICH_LIMITS.blocks)
    throw new BotApiError(400, 'Bad Request: too many blocks in the rich message');
  return out.join('');
}
