import { describe, expect, it } from 'vitest';
import { renderMarkdown, splitPlain } from '../src/core/text/markdown.js';

/** Tags opened and closed in order, so every chunk is balanced on its own. */
function balanced(html: string): boolean {
  const stack: string[] = [];
  for (const m of html.matchAll(/<(\/?)([a-z-]+)[^>]*>/g)) {
    if (m[1]) {
      if (stack.pop() !== m[2]) return false;
    } else stack.push(m[2] as string);
  }
  return stack.length === 0;
}

describe('markdown', () => {
  it('maps Markdown onto Telegram tags and escapes the rest', () => {
    const [chunk] = renderMarkdown(
      '# T\n\n**b** _i_ ~~s~~ `c` <x> & [l](https://e.com)\n\n```js\nif (a < b) {}\n```',
    );
    expect(chunk?.html).toBe(
      '<b>T</b>\n\n<b>b</b> <i>i</i> <s>s</s> <code>c</code> &lt;x&gt; &amp; <a href="https://e.com">l</a>\n\n<pre><code class="language-js">if (a &lt; b) {}</code></pre>',
    );
  });

  it('drops links with unsafe schemes but keeps their text', () => {
    expect(renderMarkdown('[x](javascript:alert(1))')[0]?.html).not.toContain('<a');
  });

  it('splits long replies with tags balanced and code kept as code in every chunk', () => {
    const code = `\`\`\`\n${'const x = 1 < 2 && 3;\n'.repeat(400)}\`\`\``;
    const prose = `**${'bold words here '.repeat(300).trim()}**`;
    const chunks = renderMarkdown(`${code}\n\n${prose}`);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.html.length).toBeLessThanOrEqual(4096);
      expect(balanced(c.html)).toBe(true);
    }
    const codeChunks = chunks.filter((c) => c.text.includes('const x'));
    for (const c of codeChunks) expect(c.html.startsWith('<pre><code>')).toBe(true);
    // Nothing dropped or doubled: the chunks' text is the rendered text, cut only at whitespace.
    const joined = chunks.map((c) => c.text).join('');
    expect(joined.replace(/\s+/g, '')).toBe(
      `${'const x = 1 < 2 && 3;\n'.repeat(400)}${'bold words here '.repeat(300)}`.replace(/\s+/g, ''),
    );
  });

  it('splits plain text at whitespace under the limit', () => {
    const text = 'word '.repeat(2000);
    const pieces = splitPlain(text);
    expect(pieces.every((p) => p.length <= 4096)).toBe(true);
    expect(pieces.join('')).toBe(text);
  });
});
