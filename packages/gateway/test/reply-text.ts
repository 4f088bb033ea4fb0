/**
 * What "the final messages hold exactly the model's text" means, as a check tests can share.
 *
 * The reference is the whole reply rendered as if it were one message with no length limit: the
 * gateway's Markdown → HTML rendering, parsed the way Telegram parses HTML, giving the plain text a
 * user reads and its entities. The reply's messages, in order, are identical to it when:
 *
 * 1. concatenating their texts, with only whitespace (possibly none) inserted at each cut between two
 *    messages and allowed before the first and after the last, gives the reference text exactly — so
 *    nothing is dropped, repeated, reordered or altered, and the only freedom is the whitespace
 *    Telegram itself strips from the edges of every message;
 * 2. every character carries the same formatting as in the reference: the same set of entity types,
 *    with the same link URL and code language (a code block cut in two is still code on both sides).
 *
 * Not a test file itself; not part of the package.
 */
import { parseTelegramHtml, type TelegramServer, type WireMessageEntity } from '@switchyard/sandbox';
import { markdownToRuns, runsToHtml } from '../src/core/text/markdown.js';

/** A message's text and entities, as Telegram stores them. */
export interface Formatted {
  text: string;
  entities: readonly WireMessageEntity[];
}

/** The reference: `markdown` rendered as one unlimited Telegram message. */
export function renderedWhole(markdown: string): Formatted {
  const parsed = parseTelegramHtml(runsToHtml(markdownToRuns(markdown)));
  if (!parsed.ok) throw new Error(`the reference rendering is not valid Telegram HTML: ${parsed.error}`);
  return { text: parsed.text, entities: parsed.entities };
}

/** The HTML a chunk holds, parsed as Telegram would. */
export function parsedHtml(html: string): Formatted {
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(`Telegram would refuse this HTML: ${parsed.error}`);
  const start = parsed.text.length - parsed.text.trimStart().length;
  const text = parsed.text.trim();
  const entities = parsed.entities
    .map((e) => {
      const from = Math.max(e.offset - start, 0);
      const to = Math.min(e.offset + e.length - start, text.length);
      return { ...e, offset: from, length: to - from };
    })
    .filter((e) => e.length > 0);
  return { text, entities };
}

/** Per UTF-16 unit: the sorted formatting that covers it, e.g. `bold|text_link:https://e.com`. */
function formatting(f: Formatted): string[] {
  const sets: string[][] = Array.from({ length: f.text.length }, () => []);
  for (const e of f.entities) {
    const name = `${e.type}${e.url ? `:${e.url}` : ''}${e.language ? `:${e.language}` : ''}`;
    for (let i = e.offset; i < e.offset + e.length && i < sets.length; i++) sets[i]?.push(name);
  }
  return sets.map((s) => s.sort().join('|'));
}

const isBlank = (s: string): boolean => s.trim().length === 0;

/**
 * Checks rule 1 and 2 of the module comment. Returns `undefined` when identical, else a description of
 * the first difference (with context), so a failing test says where the text went wrong.
 */
export function replyDifference(reference: Formatted, parts: readonly Formatted[]): string | undefined {
  const want = formatting(reference);
  const text = reference.text;
  let at = 0;
  for (const [index, part] of parts.entries()) {
    if (part.text.length === 0) return `message ${index} is empty`;
    // Only whitespace may separate this message from the text before it.
    let start = at;
    while (start < text.length && !text.startsWith(part.text, start) && /\s/.test(text[start] as string))
      start++;
    if (!text.startsWith(part.text, start)) {
      return `message ${index} does not continue the text at ${at}: expected ${JSON.stringify(
        text.slice(at, at + 60),
      )}…, got ${JSON.stringify(part.text.slice(0, 60))}…`;
    }
    const got = formatting(part);
    for (let i = 0; i < part.text.length; i++) {
      if (got[i] !== want[start + i]) {
        return `message ${index}, character ${i} (${JSON.stringify(part.text.slice(i, i + 20))}): formatting ${JSON.stringify(
          got[i],
        )}, expected ${JSON.stringify(want[start + i])}`;
      }
    }
    at = start + part.text.length;
  }
  if (!isBlank(text.slice(at)))
    return `text missing after the last message: ${JSON.stringify(text.slice(at, at + 60))}…`;
  return undefined;
}

/** The bot's messages in `chatId` as the user sees them, oldest first. */
export const botReply = (tg: Pick<TelegramServer, 'messages'>, chatId: number): Formatted[] =>
  tg
    .messages(chatId)
    .filter((m) => m.from === 'bot')
    .map((m) => ({ text: m.text, entities: m.entities }));

/**
 * Waits until the bot's messages in `chatId` show `reference` exactly; on timeout, throws the last
 * difference found (prefixed with `label`), which says what is wrong better than a timeout does.
 */
export async function waitForReply(
  tg: Pick<TelegramServer, 'messages'>,
  chatId: number,
  reference: Formatted,
  timeoutMs: number,
  label = '',
): Promise<void> {
  let difference: string | undefined = 'not checked';
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    difference = replyDifference(reference, botReply(tg, chatId));
    if (difference === undefined) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${label}${difference}`);
}
