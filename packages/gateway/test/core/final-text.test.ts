import { describe, expect, it } from 'vitest';
import { finalText } from '../../src/core/reply/final-text.js';

describe('final text', () => {
  it.each([
    [
      'a success, rich',
      { text: 'Done.', outcome: 'success' },
      true,
      { reply: 'Done.', separateNote: undefined },
    ],
    [
      'a stop, rich: the note under a rule',
      { text: 'Half', outcome: 'interrupted' },
      true,
      { reply: 'Half\n\n---\n\n⏹ Stopped.', separateNote: undefined },
    ],
    [
      'a stop, classic: the note on its own',
      { text: 'Half', outcome: 'interrupted' },
      false,
      { reply: 'Half', separateNote: '⏹ Stopped.' },
    ],
    [
      'a failure with no text',
      { text: '', outcome: 'error', error: 'boom' },
      false,
      { reply: '⚠️ The turn failed: boom', separateNote: undefined },
    ],
    [
      'nothing at all',
      { text: '', outcome: 'success' },
      true,
      { reply: '(no text)', separateNote: undefined },
    ],
  ] as const)('%s', (_name, end, inline, expected) => {
    expect(finalText({ error: undefined, ...end }, inline)).toEqual(expected);
  });
});
