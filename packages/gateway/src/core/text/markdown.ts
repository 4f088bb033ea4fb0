/**
 * The model's Markdown → Telegram's HTML subset, split into messages that each fit Telegram's limit
 * with every tag balanced inside its own message.
 *
 * markdown-it parses; this module only maps its tokens onto the tags Telegram accepts (b, i, s, code,
 * pre, a, blockquote) and plain text for the rest (headings become bold, list items get a bullet or a
 * number, tables become rows of cells). The intermediate form is a flat list of {@link Run}s — text
 * with the stack of tags around it — so a split can cut anywhere and re-open the same tags in the next
 * message: a code block cut in two stays code on both sides.
 */
import { escapeHtml, MESSAGE_LIMIT, type TELEGRAM_TAGS } from '@switchyard/card';
import MarkdownIt from 'markdown-it';
import { destinationNote, linkAllowed } from './links.js';

/** Telegram's limit on a message's text (the card's {@link MESSAGE_LIMIT}). */
export const TELEGRAM_TEXT_LIMIT = MESSAGE_LIMIT;

/** One HTML element around a run, such as `{ name: 'a', attrs: ' href="…"' }`. */
export interface Tag {
  name: (typeof TELEGRAM_TAGS)[number];
  attrs: string;
}

/** Text (unescaped) and the tags around it, outermost first. */
export interface Run {
  text: string;
  tags: readonly Tag[];
}

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
type Token = ReturnType<typeof md.parse>[number];

const tag = (name: Tag['name'], attrs = ''): Tag => ({ name, attrs });

/** Parses Markdown into runs; the runs' text is exactly what the user will read. */
export function markdownToRuns(markdown: string): Run[] {
  const runs: Run[] = [];
  const blockTags: Tag[] = [];
  const lists: { ordered: boolean; next: number }[] = [];
  let afterMarker = false;

  const emit = (text: string, tags: readonly Tag[]): void => {
    if (text.length === 0) return;
    runs.push({ text, tags: [...tags] });
    afterMarker = false;
  };
  const endsWithNewline = (): boolean => {
    const last = runs[runs.length - 1];
    return last?.text.endsWith('\n') ?? false;
  };
  /** Separates a new block from what came before: a blank line, or one newline inside a list. */
  const separate = (): void => {
    if (runs.length === 0 || afterMarker) return;
    const want = lists.length > 0 ? '\n' : '\n\n';
    const last = runs[runs.length - 1] as Run;
    if (last.text.endsWith(want)) return;
    emit(last.text.endsWith('\n') && want === '\n\n' ? '\n' : want, blockTags);
  };

  const inline = (children: readonly Token[]): void => {
    const tags: Tag[] = [...blockTags];
    /** The open links, innermost last: where each goes and the text it shows so far. */
    const links: { href: string; text: string }[] = [];
    const note = (text: string): void => {
      for (const link of links) link.text += text;
    };
    for (const t of children) {
      switch (t.type) {
        case 'text':
          emit(t.content, tags);
          note(t.content);
          break;
        case 'code_inline':
          emit(t.content, [...tags, tag('code')]);
          note(t.content);
          break;
        case 'softbreak':
        case 'hardbreak':
          emit('\n', tags);
          break;
        case 'strong_open':
          tags.push(tag('b'));
          break;
        case 'em_open':
          tags.push(tag('i'));
          break;
        case 's_open':
          tags.push(tag('s'));
          break;
        case 'link_open': {
          const href = String(t.attrGet('href') ?? '');
          tags.push(linkAllowed(href) ? tag('a', ` href="${escapeHtml(href)}"`) : tag('span'));
          links.push({ href, text: '' });
          break;
        }
        case 'link_close': {
          tags.pop();
          const link = links.pop();
          const where = link && linkAllowed(link.href) ? destinationNote(link.text, link.href) : '';
          if (where) emit(where, tags);
          break;
        }
        case 'strong_close':
        case 'em_close':
        case 's_close':
          tags.pop();
          break;
        case 'image':
          emit(t.content || 'image', tags);
          break;
        default:
          if (t.content) emit(t.content, tags);
      }
    }
  };

  let cellIndex = 0;
  for (const t of md.parse(markdown, {})) {
    switch (t.type) {
      case 'paragraph_open':
        if (!t.hidden) separate();
        break;
      case 'heading_open':
        separate();
        blockTags.push(tag('b'));
        break;
      case 'heading_close':
      case 'blockquote_close':
        blockTags.pop();
        break;
      case 'blockquote_open':
        separate();
        blockTags.push(tag('blockquote'));
        break;
      case 'bullet_list_open':
      case 'ordered_list_open':
        separate();
        lists.push({ ordered: t.type === 'ordered_list_open', next: Number(t.attrGet('start') ?? 1) });
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        break;
      case 'list_item_open': {
        if (runs.length > 0 && !endsWithNewline()) emit('\n', blockTags);
        const list = lists[lists.length - 1];
        const indent = '  '.repeat(Math.max(0, lists.length - 1));
        const marker = list?.ordered ? `${list.next++}. ` : '• ';
        emit(indent + marker, blockTags);
        afterMarker = true;
        break;
      }
      case 'fence':
      case 'code_block': {
        separate();
        const lang = t.type === 'fence' ? t.info.trim().split(/\s+/)[0] : '';
        const code = lang ? tag('code', ` class="language-${escapeHtml(lang)}"`) : tag('code');
        emit(t.content.replace(/\n$/, ''), [...blockTags, tag('pre'), code]);
        break;
      }
      case 'hr':
        separate();
        emit('———', blockTags);
        break;
      case 'html_block':
        separate();
        emit(t.content.replace(/\n$/, ''), blockTags);
        break;
      case 'table_open':
        separate();
        break;
      case 'tr_open':
        cellIndex = 0;
        if (runs.length > 0 && !endsWithNewline()) emit('\n', blockTags);
        break;
      case 'th_open':
      case 'td_open':
        if (cellIndex++ > 0) emit(' | ', blockTags);
        break;
      case 'inline':
        inline(t.children ?? []);
        break;
      default:
        break;
    }
  }
  return runs;
}

const open = (t: Tag): string => `<${t.name}${t.attrs}>`;
const close = (t: Tag): string => `</${t.name}>`;
const sameTag = (a: Tag | undefined, b: Tag | undefined): boolean =>
  a !== undefined && b !== undefined && a.name === b.name && a.attrs === b.attrs;

/** Serializes runs to balanced HTML: every tag opened is closed at the end. `span` is dropped. */
export function runsToHtml(runs: readonly Run[]): string {
  let html = '';
  let stack: readonly Tag[] = [];
  for (const run of runs) {
    let common = 0;
    while (common < stack.length && common < run.tags.length && sameTag(stack[common], run.tags[common]))
      common++;
    for (let i = stack.length - 1; i >= common; i--) html += tagText(stack[i] as Tag, close);
    for (let i = common; i < run.tags.length; i++) html += tagText(run.tags[i] as Tag, open);
    html += escapeHtml(run.text);
    stack = run.tags;
  }
  for (let i = stack.length - 1; i >= 0; i--) html += tagText(stack[i] as Tag, close);
  return html;
}

const tagText = (t: Tag, f: (t: Tag) => string): string => (t.name === 'span' ? '' : f(t));

/** The text a user reads from these runs. */
export function runsToText(runs: readonly Run[]): string {
  return runs.map((r) => r.text).join('');
}

/** One message's worth of a rendered reply: its HTML and the plain text it shows. */
export interface HtmlChunk {
  html: string;
  text: string;
}

/**
 * Renders Markdown and splits it into messages whose HTML is at most `limit` characters (so their text
 * is too). Cuts prefer a blank line, then a newline, then a space; a message never starts or ends inside
 * an unbalanced tag, and nothing is dropped or repeated apart from the whitespace at a cut.
 */
export function renderMarkdown(markdown: string, limit = TELEGRAM_TEXT_LIMIT): HtmlChunk[] {
  const chunks: Run[][] = [];
  let current: Run[] = [];
  const queue = markdownToRuns(markdown);
  while (queue.length > 0) {
    const run = queue.shift() as Run;
    if (runsToHtml([...current, run]).length <= limit) {
      current.push(run);
      continue;
    }
    const overhead = runsToHtml([...current, { text: 'x', tags: run.tags }]).length - 1;
    const room = limit - overhead;
    const cut = room > 0 ? cutPoint(run.text, room, current.length === 0) : 0;
    if (cut > 0) {
      current.push({ text: run.text.slice(0, cut), tags: run.tags });
      queue.unshift({ text: run.text.slice(cut), tags: run.tags });
    } else {
      queue.unshift(run);
    }
    if (current.length === 0)
      throw new Error('markdown split made no progress (limit too small for the tags)');
    chunks.push(current);
    current = [];
  }
  if (current.length > 0) chunks.push(current);
  return chunks
    .map((runs) => trimRuns(runs))
    .filter((runs) => runsToText(runs).trim().length > 0)
    .map((runs) => ({ html: runsToHtml(runs), text: runsToText(runs) }));
}

/**
 * The longest prefix of `text` whose escaped form fits in `room`, cut at a blank line, newline or
 * space when one lies in its second half (or anywhere when `mustProgress` and nothing better exists).
 */
function cutPoint(text: string, room: number, mustProgress: boolean): number {
  let fit = 0;
  let used = 0;
  while (fit < text.length) {
    const cost = escapeHtml(text[fit] as string).length;
    if (used + cost > room) break;
    used += cost;
    fit++;
  }
  if (fit >= text.length) return text.length;
  // Never cut a surrogate pair in half.
  if (fit > 0 && isHighSurrogate(text.charCodeAt(fit - 1))) fit--;
  const head = text.slice(0, fit);
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = head.lastIndexOf(sep);
    if (at > 0 && at >= fit / 2) return at + sep.length;
  }
  return mustProgress || fit > room / 2 ? fit : 0;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** Drops whitespace at the edges of a message (Telegram would strip it anyway). */
function trimRuns(runs: Run[]): Run[] {
  const out = runs.map((r) => ({ ...r }));
  while (out.length > 0 && (out[0] as Run).text.trimStart() === '') out.shift();
  while (out.length > 0 && (out[out.length - 1] as Run).text.trimEnd() === '') out.pop();
  const first = out[0];
  if (first && !first.tags.some((t) => t.name === 'pre')) first.text = first.text.trimStart();
  const last = out[out.length - 1];
  if (last && !last.tags.some((t) => t.name === 'pre')) last.text = last.text.trimEnd();
  return out;
}

/**
 * Splits plain text into pieces of at most `limit` characters, preferring newlines and spaces; used
 * for the live (unformatted) stream and for the fallback when Telegram rejects the HTML.
 */
export function splitPlain(text: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const cut = cutPoint(rest, limit, true);
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0 || pieces.length === 0) pieces.push(rest);
  return pieces;
}
