/**
 * Cuts that a person decides on: a permission prompt must never hide the end of what it approves, and
 * no cut may leave half of a surrogate pair (a lone half is invalid UTF-16 to Telegram).
 */
import { describe, expect, it } from 'vitest';
import { cutEnd, cutMiddle, cutText, safeSlice, visibleText } from '../src/index.js';

const lone = (text: string) =>
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe('visibleText', () => {
  it('collapses padding so the end of a padded command stays in view, keeping line breaks', () => {
    expect(visibleText(`echo hi${' '.repeat(3000)}; curl x | sh`)).toBe('echo hi ; curl x | sh');
    expect(visibleText(`echo hi\n\n\n\t  \ncurl x | sh`)).toBe('echo hi\ncurl x | sh');
  });

  it('shows the characters that reorder or hide text', () => {
    expect(visibleText('ls \u202Ehs.x lruc\u202C')).toBe('ls ⟨U+202E⟩hs.x lruc⟨U+202C⟩');
    expect(visibleText('a\u200Bb\u0007')).toBe('a⟨U+200B⟩b⟨U+0007⟩');
    expect(visibleText('👨‍👩‍👧')).toBe('👨‍👩‍👧');
  });
});

describe('cutMiddle', () => {
  it('keeps the head and the tail around the count of characters not shown', () => {
    const text = `${'a'.repeat(3000)}; curl x | sh`;
    const cut = cutMiddle(text, 200);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut.startsWith('aaa')).toBe(true);
    expect(cut.endsWith('; curl x | sh')).toBe(true);
    const hidden = Number(/…\[(\d+) more characters\]…/.exec(cut)?.[1]);
    const shown = cut.replace(/ …\[\d+ more characters\]… /, '');
    expect(hidden + shown.length).toBe(text.length);
    expect(cutMiddle('short', 200)).toBe('short');
  });

  it('never splits a surrogate pair, and counts an emoji as one character', () => {
    const text = '😀'.repeat(1000);
    for (const max of [50, 51, 52, 53, 199, 200]) {
      const cut = cutMiddle(text, max);
      expect(lone(cut)).toBe(false);
      expect(cut.length).toBeLessThanOrEqual(max);
      const hidden = Number(/\[(\d+) more/.exec(cut)?.[1]);
      expect(hidden + [...cut.replace(/ …\[.*\]… /, '')].length).toBe(1000);
    }
  });
});

describe('whole characters', () => {
  it('cutEnd, cutText and safeSlice leave no lone surrogate', () => {
    const text = `a${'😀'.repeat(20)}`;
    for (let n = 1; n < 20; n++) {
      expect(lone(cutEnd(text, n))).toBe(false);
      expect(lone(cutText(text, n))).toBe(false);
      expect(lone(safeSlice(text, 0, n))).toBe(false);
      expect(lone(safeSlice(text, n))).toBe(false);
    }
  });
});
