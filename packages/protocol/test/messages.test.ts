import { describe, expect, it } from 'vitest';
import { type Frame, PROTOCOL_VERSION, parseFrame, RELIABLE_TYPES } from '../src/common/messages/frame.js';

const userMessage = {
  type: 'user_message',
  seq: 1,
  inboundId: 'in-1',
  route: { chatId: -100123, threadId: 7 },
  telegramMessageId: 42,
  sender: { id: 1001, name: 'Ada', username: 'ada' },
  text: 'hello',
  attachments: [{ kind: 'photo', path: '/var/lib/x/inbox/a.jpg' }],
  sentAt: 1_700_000_000_000,
} satisfies Frame;

describe('parseFrame', () => {
  it('accepts a well-formed frame and returns it typed', () => {
    const result = parseFrame(userMessage);
    expect(result).toEqual({ ok: true, frame: userMessage });
  });

  it('accepts a handshake', () => {
    const hello = {
      type: 'hello',
      version: PROTOCOL_VERSION,
      agent: 'a',
      instanceId: 'i',
      streamId: 's',
      lastSeen: 0,
    };
    expect(parseFrame(hello).ok).toBe(true);
  });

  it('names the field that is wrong', () => {
    const result = parseFrame({ ...userMessage, route: { chatId: 'nope' } });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('bad_message');
      expect(result.message).toContain('user_message');
      expect(result.message).toContain('route.chatId');
    }
  });

  it('refuses an unknown type', () => {
    const result = parseFrame({ type: 'launch_missiles' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain('launch_missiles');
  });

  it('refuses values that are not objects', () => {
    for (const value of [null, 42, 'text', [1, 2], undefined]) expect(parseFrame(value).ok).toBe(false);
  });

  it('numbers only frames that change what a user sees, never live deltas or control frames', () => {
    expect(RELIABLE_TYPES.has('text_delta')).toBe(false);
    expect(RELIABLE_TYPES.has('ping')).toBe(false);
    expect(RELIABLE_TYPES.has('ack')).toBe(false);
    expect(RELIABLE_TYPES.has('user_message')).toBe(true);
    expect(RELIABLE_TYPES.has('turn_ended')).toBe(true);
  });
});
