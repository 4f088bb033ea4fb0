/**
 * One link policy for both reply paths: the rich path once passed `javascript:` links through (the
 * classic one allowed only http, https, tg and mailto), and a link's text could pass for another host.
 */
import { describe, expect, it } from 'vitest';
import { destinationNote, linkAllowed } from '../src/core/text/links.js';
import { renderMarkdown } from '../src/core/text/markdown.js';
import { toRichMarkdown } from '../src/core/text/rich-markdown.js';

const classic = (markdown: string) => renderMarkdown(markdown)[0]?.html ?? '';

describe('link policy', () => {
  it('allows http, https, tg and mailto targets only', () => {
    for (const ok of ['https://a.example', 'http://a.example', 'tg://user?id=1', 'mailto:a@b.example'])
      expect(linkAllowed(ok)).toBe(true);
    for (const bad of ['javascript:alert(1)', ' JavaScript:x', 'data:text/html,x', 'file:///etc/passwd', 'x'])
      expect(linkAllowed(bad)).toBe(false);
  });

  it('names the host a link goes to when its text names another one', () => {
    expect(destinationNote('https://bank.example/login', 'https://evil.test/x')).toBe(' (evil.test)');
    expect(destinationNote('www.bank.example', 'https://bank.example/')).toBe('');
    expect(destinationNote('bank.example', 'mailto:me@evil.test')).toBe(' (mailto:me@evil.test)');
    expect(destinationNote('the docs', 'https://evil.test')).toBe('');
  });
});

describe('the rich path', () => {
  it('drops a javascript: link, image, reference definition or <a> tag, keeping the text', () => {
    expect(toRichMarkdown('see [x](javascript:alert(1)) now')).toBe('see x now');
    expect(toRichMarkdown('![pic](javascript:alert(1))')).toBe('pic');
    expect(toRichMarkdown('[x][r]\n\n[r]: javascript:alert(1)')).toBe('[x][r]\n\n\\[r]: javascript:alert(1)');
    expect(toRichMarkdown('<a href="javascript:alert(1)">x</a>')).toBe(
      '\\<a href="javascript:alert(1)">x</a>',
    );
  });

  it('keeps allowed links as written, and shows the real host after a text that names another', () => {
    expect(toRichMarkdown('[docs](https://a.example/x_(y) "t")')).toBe('[docs](https://a.example/x_(y) "t")');
    expect(toRichMarkdown('[https://bank.example](https://evil.test/)')).toBe(
      '[https://bank.example](https://evil.test/) (evil.test)',
    );
    expect(toRichMarkdown('<a href="https://a.example">x</a>')).toBe('<a href="https://a.example">x</a>');
    expect(toRichMarkdown('`[x](javascript:y)`')).toBe('`[x](javascript:y)`');
  });
});

describe('the classic path', () => {
  it('shows the real host after a link whose text names another', () => {
    expect(classic('[https://bank.example](https://evil.test/)')).toBe(
      '<a href="https://evil.test/">https://bank.example</a> (evil.test)',
    );
    expect(classic('see https://a.example/x')).toBe(
      'see <a href="https://a.example/x">https://a.example/x</a>',
    );
    expect(classic('[x](javascript:alert(1))')).not.toContain('<a');
  });
});
