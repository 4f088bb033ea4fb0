import { describe, expect, it } from 'vitest';
import { RICH_TEXT_LIMIT, splitRich, toRichMarkdown } from '../src/core/text/rich-markdown.js';

describe('rich markdown dialect', () => {
  it('keeps what both dialects read alike: headings, tables, task lists, quotes, footnotes, details', () => {
    const source = [
      '# Title',
      '',
      '| a | b |',
      '|:--|--:|',
      '| **1** | `x || y` |',
      '',
      '- [ ] todo',
      '- [x] done',
      '',
      '> quoted _text_',
      '',
      'A note[^1] and ~~gone~~ and <u>under</u> and <https://t.me>.',
      '',
      '[^1]: The note.',
      '',
      '<details><summary>More</summary>',
      '',
      'Hidden.',
      '',
      '</details>',
    ].join('\n');
    expect(toRichMarkdown(source)).toBe(source);
  });

  it('escapes || in prose, which Telegram would read as a spoiler', () => {
    expect(toRichMarkdown('run a || b then')).toBe('run a \\|\\| b then');
  });

  it('escapes == in prose, which Telegram would read as marked text', () => {
    expect(toRichMarkdown('if a == b and c == d')).toBe('if a \\=\\= b and c \\=\\= d');
  });

  it('escapes a $ before a digit (money), which Telegram would read as a formula; keeps $x$ math', () => {
    expect(toRichMarkdown('costs $5 to $10, and $x^2$ is math')).toBe(
      'costs \\$5 to \\$10, and $x^2$ is math',
    );
  });

  it('escapes a < that opens no tag Telegram supports, which Telegram would refuse', () => {
    expect(toRichMarkdown('a Vec<String> and 1 < 2 but <b>bold</b>')).toBe(
      'a Vec\\<String> and 1 \\< 2 but <b>bold</b>',
    );
  });

  it('never touches code: fenced blocks and inline spans stay verbatim', () => {
    const source = '```sh\na || b == c $5 <x>\n```\nand `a || b` and ``x == `y` ``';
    expect(toRichMarkdown(source)).toBe(source);
  });

  it('keeps backslash escapes the model wrote', () => {
    expect(toRichMarkdown('a \\| b')).toBe('a \\| b');
  });
});

describe('splitRich', () => {
  it('keeps an answer up to 32,768 characters whole', () => {
    const text = `| a | b |\n|--|--|\n${'| x | y |\n'.repeat(100)}\n\n${'word '.repeat(5000)}`;
    expect(text.length).toBeGreaterThan(20_000);
    expect(splitRich(text)).toEqual([text]);
  });

  it('splits past the limit only between blocks, losing nothing', () => {
    const para = (n: number) => `Paragraph ${n}: ${'lorem ipsum '.repeat(300)}`.trim();
    const blocks = Array.from({ length: 12 }, (_, i) => para(i));
    const text = blocks.join('\n\n');
    expect(text.length).toBeGreaterThan(RICH_TEXT_LIMIT);
    const parts = splitRich(text);
    expect(parts.length).toBe(2);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(RICH_TEXT_LIMIT);
    expect(parts.join('\n\n')).toBe(text);
  });

  it('cuts a code block over the limit at lines and re-opens its fence', () => {
    const code = `\`\`\`js\n${'const x = 1;\n'.repeat(4000)}\`\`\``;
    const parts = splitRich(code);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(RICH_TEXT_LIMIT);
      expect(p.startsWith('```js\n')).toBe(true);
      expect(p.endsWith('```')).toBe(true);
    }
  });

  it('splits past 500 blocks even under the character limit', () => {
    const list = Array.from({ length: 700 }, (_, i) => `- item ${i}`).join('\n');
    const parts = splitRich(`intro\n\n${list}\n\nend`, RICH_TEXT_LIMIT, 500);
    expect(parts.length).toBeGreaterThan(1);
  });
});
