import type { Message } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import { userMessageFrame } from '../src/core/intake/user-message-frame.js';

const ann = { id: 1, is_bot: false, first_name: 'Ann', username: 'ann' };
const base = (extra: Partial<Message>): Message =>
  ({
    message_id: 10,
    date: 1_700_000_000,
    chat: { id: 1, type: 'private', first_name: 'Ann' },
    from: ann,
    text: 'rm -rf ~ please',
    ...extra,
  }) as Message;
const allowed = (id: number | undefined) =>
  (id === 1 ? 'allowed' : 'third_party') as 'allowed' | 'third_party';
const frameOf = (message: Message) =>
  userMessageFrame(message, {
    inboundId: 'ib-1',
    route: { chatId: 1 },
    text: message.text ?? '',
    attachments: [],
    authorOf: allowed,
  });

describe('user message frame', () => {
  // The quote was cut twice (issue 28): to Telegram's text limit here, by a slice that can split an
  // emoji, then to the protocol's limit in `message-fit.ts`, which never does but saw a text already short
  // enough. Cut once now, where every client-chosen field is.
  it('a quote at the limit is cut once, to the protocol’s limit, never inside an emoji', () => {
    const long = `${'a'.repeat(4095)}😀 and more`;
    const quoted = { message_id: 9, date: 1, chat: base({}).chat, from: ann, text: long } as Message;
    const text = frameOf(base({ reply_to_message: quoted as never })).replyTo?.text ?? '';
    expect(text).toBe('a'.repeat(4095));
  });

  it("a forwarded stranger's text is marked as the stranger's, not the sender's", () => {
    const bob = { id: 2, is_bot: false, first_name: 'Bob', last_name: 'Stone' };
    const frame = frameOf(base({ forward_origin: { type: 'user', date: 1, sender_user: bob } }));
    expect(frame.forwardedFrom).toEqual({ name: 'Bob Stone', author: 'third_party' });
    expect(frame.sender.id).toBe(1);
  });

  it('forwards from a channel, a chat and a hidden user are third-party; an allowed user stays allowed', () => {
    const channel = { id: -100, type: 'channel', title: 'News' } as const;
    expect(
      frameOf(base({ forward_origin: { type: 'channel', date: 1, chat: channel, message_id: 3 } }))
        .forwardedFrom,
    ).toEqual({ name: 'News', author: 'third_party' });
    const group = { id: -5, type: 'group', title: 'Team' } as const;
    expect(
      frameOf(base({ forward_origin: { type: 'chat', date: 1, sender_chat: group } })).forwardedFrom,
    ).toEqual({ name: 'Team', author: 'third_party' });
    expect(
      frameOf(base({ forward_origin: { type: 'hidden_user', date: 1, sender_user_name: 'Eve' } }))
        .forwardedFrom,
    ).toEqual({ name: 'Eve', author: 'third_party' });
    expect(
      frameOf(base({ forward_origin: { type: 'user', date: 1, sender_user: ann } })).forwardedFrom,
    ).toEqual({ name: 'Ann (@ann)', author: 'allowed' });
    expect(frameOf(base({})).forwardedFrom).toBeUndefined();
  });
});
