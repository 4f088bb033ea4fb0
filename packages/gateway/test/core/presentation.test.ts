/** How a turn's reply is presented (`core/reply/presentation.ts`), as a table. */
import { describe, expect, it } from 'vitest';
import { decidePresentation, openedAs, type PresentationView } from '../../src/core/reply/presentation.js';

const view = (over: Partial<PresentationView>): PresentationView => ({
  route: { chatId: 7 },
  replies: 'rich',
  richMissing: false,
  ...over,
});

describe('the presentation of a reply', () => {
  it.each([
    ['a private chat with rich replies: a draft', view({}), 'draft'],
    ['a group with rich replies: rich edits', view({ route: { chatId: -7 } }), 'edit'],
    ['a conversation whose /settings say classic', view({ replies: 'classic' }), 'classic'],
    ['a server without rich messages', view({ richMissing: true }), 'classic'],
    [
      "a lane's turn (untrusted input: no previews)",
      view({ route: { chatId: 7, lane: 'hook:ci' } }),
      'classic',
    ],
    ['a group lane', view({ route: { chatId: -7, lane: 'schedule:daily' } }), 'classic'],
  ] as const)('%s', (_name, input, expected) => {
    expect(decidePresentation(input)).toBe(expected);
  });

  it('a draft whose turn owns a message already opens as an edit of it; the others open as decided', () => {
    expect(openedAs('draft', [])).toBe('draft');
    expect(openedAs('draft', [41])).toBe('edit');
    expect(openedAs('edit', [])).toBe('edit');
    expect(openedAs('classic', [41])).toBe('classic');
  });
});
