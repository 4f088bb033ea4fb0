import type { FrameOf } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { renderUserMessage, stripMessageHeader } from '../src/io/delivery/user-input.js';

const message = (extra: Partial<FrameOf<'user_message'>>): FrameOf<'user_message'> => ({
  type: 'user_message',
  inboundId: 'ib-1',
  route: { chatId: 5 },
  telegramMessageId: 42,
  sender: { id: 1, name: 'Ann', username: 'ann' },
  text: 'run the deploy script',
  attachments: [],
  sentAt: 0,
  ...extra,
});
const textOf = (line: string): string =>
  (JSON.parse(line) as { message: { content: Array<{ text?: string }> } }).message.content.at(-1)?.text ?? '';

describe('user input', () => {
  it("a forwarded third party's text is labelled as theirs in the header, as a third-party quote is", () => {
    const header = textOf(
      renderUserMessage(message({ forwardedFrom: { name: 'Bob', author: 'third_party' } })),
    ).split('\n')[0];
    expect(header).toContain('from="Ann (@ann)"');
    expect(header).toContain('forwarded_from_third_party="Bob"');
    const own = textOf(renderUserMessage(message({ forwardedFrom: { name: 'Ann', author: 'allowed' } })));
    expect(own.split('\n')[0]).toContain('forwarded_from="Ann"');
    expect(textOf(renderUserMessage(message({})))).not.toContain('forwarded');
  });

  it('a run of a schedule or webhook is marked as not from a person, naming its source, and keeps the inbound marker', () => {
    const text = textOf(
      renderUserMessage(
        message({
          origin: { kind: 'schedule', name: 'ci-digest' },
          sender: { id: 0, name: 'schedule ci-digest' },
        }),
      ),
    );
    const header = text.split('\n')[0];
    expect(header).toBe('[telegram chat=5 schedule="ci-digest" not_from_a_person inbound=ib-1]');
    expect(stripMessageHeader(text)).toBe('run the deploy script');
    expect(textOf(renderUserMessage(message({})))).not.toContain('not_from_a_person');
  });
});
