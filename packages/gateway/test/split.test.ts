/**
 * The split of a rendered reply into Telegram-sized messages loses and repeats nothing: for random
 * Markdown and small limits (many cuts), the chunks joined are identical to the whole rendering in the
 * sense of `core/reply/reply-text.ts` (same text up to whitespace at cuts, same formatting on every
 * character).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../src/core/text/markdown.js';
import { parsedHtml, renderedWhole, replyDifference } from './reply-text.js';

const word = fc.oneof(
  fc.constantFrom('alpha', 'beta', 'a&b', '<tag>', 'x>y', '"q"', '😀', 'naïve', 'https://e.com/x?a=1&b=2'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => !/[\\`*_~[\]#>|!-]/.test(s)),
);
const words = fc.array(word, { minLength: 1, maxLength: 30 }).map((ws) => ws.join(' '));
const inline = fc.oneof(
  words,
  words.map((w) => `**${w}**`),
  words.map((w) => `_${w}_`),
  words.map((w) => `\`${w.replaceAll('`', '')}\``),
  words.map((w) => `[${w}](https://example.com/${w.length})`),
);
const block = fc.oneof(
  fc.array(inline, { minLength: 1, maxLength: 6 }).map((xs) => xs.join(' ')),
  fc.array(words, { minLength: 1, maxLength: 8 }).map((lines) => `\`\`\`ts\n${lines.join('\n')}\n\`\`\``),
  fc.array(inline, { minLength: 1, maxLength: 5 }).map((items) => items.map((i) => `- ${i}`).join('\n')),
  words.map((w) => `## ${w}`),
  words.map((w) => `> ${w}`),
  fc.constant('a'.repeat(700)),
);
const markdown = fc.array(block, { minLength: 1, maxLength: 12 }).map((bs) => bs.join('\n\n'));

describe('splitting a rendered reply', () => {
  it('keeps every character and its formatting, for random Markdown and limits', () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 120, max: 4096 }), (md, limit) => {
        const chunks = renderMarkdown(md, limit);
        for (const c of chunks) expect(c.html.length).toBeLessThanOrEqual(limit);
        const difference = replyDifference(
          renderedWhole(md),
          chunks.map((c) => parsedHtml(c.html)),
        );
        expect(difference).toBeUndefined();
        // The chunk's `text` (used by the plain-text fallback) is what its HTML shows.
        for (const c of chunks) expect(c.text.trim()).toBe(parsedHtml(c.html).text);
      }),
      { numRuns: 300 },
    );
  });

  it('the 17k-character benchmark reply splits into messages that join to exactly the model text', () => {
    const full = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
    const chunks = renderMarkdown(full);
    expect(chunks.length).toBe(5);
    expect(chunks.map((c) => parsedHtml(c.html).text).join(' ')).toBe(full);
  });
});
