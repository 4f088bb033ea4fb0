import { describe, expect, it } from 'vitest';
import { parseTelegramHtml, renderTelegramHtml } from '../src/telegram/html.js';

describe('parseTelegramHtml', () => {
  it('turns the supported tags into entities with UTF-16 offsets', () => {
    const result = parseTelegramHtml(
      '<b>bold</b> 😀 <i>it</i> <a href="https://x.org/?a=1&amp;b=2">link</a>',
    );
    expect(result).toEqual({
      ok: true,
      text: 'bold 😀 it link',
      entities: [
        { type: 'bold', offset: 0, length: 4 },
        { type: 'italic', offset: 8, length: 2 },
        { type: 'text_link', offset: 11, length: 4, url: 'https://x.org/?a=1&b=2' },
      ],
    });
  });

  it('accepts every tag of the HTML style, case-insensitively', () => {
    const html =
      '<B>b</B><strong>s</strong><em>e</em><u>u</u><ins>i</ins><s>s</s><strike>s</strike><del>d</del>' +
      '<tg-spoiler>x</tg-spoiler><span class="tg-spoiler">y</span><code>c</code><pre>p</pre>' +
      '<blockquote>q</blockquote><blockquote expandable>e</blockquote><tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>';
    const result = parseTelegramHtml(html);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.entities.map((e) => e.type)).toEqual([
      'bold',
      'bold',
      'italic',
      'underline',
      'underline',
      'strikethrough',
      'strikethrough',
      'strikethrough',
      'spoiler',
      'spoiler',
      'code',
      'pre',
      'blockquote',
      'expandable_blockquote',
      'custom_emoji',
    ]);
  });

  it('makes <pre><code class="language-x"> a pre entity with a language', () => {
    const result = parseTelegramHtml('<pre><code class="language-ts">let a = 1;</code></pre>');
    expect(result).toEqual({
      ok: true,
      text: 'let a = 1;',
      entities: [{ type: 'pre', offset: 0, length: 10, language: 'ts' }],
    });
  });

  it('decodes the four named entities and numeric references, and keeps other ampersands', () => {
    const result = parseTelegramHtml('&lt;a&gt; &amp; &quot; &#65;&#x42; &nbsp; AT&T');
    expect(result).toMatchObject({ ok: true, text: '<a> & " AB &nbsp; AT&T' });
  });

  it.each([
    ['<p>x</p>', 'Unsupported start tag "p" at byte offset 0'],
    ['a << b', 'Unsupported start tag "<" at byte offset 2'],
    ['é<br/>', 'Unsupported start tag "br/" at byte offset 2'],
    ['<b>x</i>', 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'],
    ['x</b>', 'Unexpected end tag at byte offset 1'],
    ['<b>x', 'Can\'t find end tag corresponding to start tag "b"'],
    ['<b', 'Unclosed start tag at byte offset 0'],
    ['<span>x</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'],
  ])('refuses %j like Telegram', (html, error) => {
    expect(parseTelegramHtml(html)).toEqual({ ok: false, error });
  });

  it('drops empty entities', () => {
    expect(parseTelegramHtml('a<b></b>c')).toEqual({ ok: true, text: 'ac', entities: [] });
  });
});

describe('renderTelegramHtml', () => {
  it('round-trips parsed HTML, nested tags included', () => {
    const html =
      '<b>bold <i>both</i></b> &lt;tag&gt; <pre><code class="language-ts">x &amp;&amp; y</code></pre>';
    const parsed = parseTelegramHtml(html);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(renderTelegramHtml(parsed.text, parsed.entities)).toBe(html);
  });

  it('leaves entities without an HTML form (commands) as text', () => {
    expect(renderTelegramHtml('/start now', [{ type: 'bot_command', offset: 0, length: 6 }])).toBe(
      '/start now',
    );
  });
});
