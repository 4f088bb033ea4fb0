/**
 * A strict checker for the Telegram HTML the card emits, used by the render tests: only known tags,
 * properly nested, no stray `<`, `>` or `&`. Returns the first problem, or undefined.
 */
import { TELEGRAM_TAGS } from '../src/index.js';

const ALLOWED = new Set<string>(TELEGRAM_TAGS);

export function telegramHtmlProblem(html: string): string | undefined {
  const stack: string[] = [];
  const tagPattern = /<(\/?)([a-z-]+)>|[<>]|&(?!(?:amp|lt|gt|quot);)/g;
  for (const match of html.matchAll(tagPattern)) {
    const [whole, closing, name] = match;
    if (name === undefined) return `stray ${JSON.stringify(whole)} at ${match.index}`;
    if (!ALLOWED.has(name)) return `tag <${name}> is not allowed by Telegram`;
    if (closing === '') stack.push(name);
    else if (stack.pop() !== name) return `</${name}> at ${match.index} closes nothing open`;
  }
  return stack.length === 0 ? undefined : `unclosed <${stack.join('>, <')}>`;
}
