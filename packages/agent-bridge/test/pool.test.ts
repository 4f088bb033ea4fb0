import { describe, expect, it } from 'vitest';
import {
  arrival,
  idleExpired,
  nextToServe,
  planSlot,
  type SlotView,
  type StartingFrame,
  withoutMessagesOf,
} from '../src/core/pool/pool.js';

const view = (key: string, over: Partial<SlotView> = {}): SlotView => ({
  key,
  live: true,
  evictable: true,
  lastActiveAt: 0,
  ...over,
});

describe('process slots', () => {
  it('a free slot is used while fewer than the cap are live', () => {
    expect(planSlot([view('a'), view('b', { live: false })], 2, 'c', 0)).toEqual({ kind: 'free' });
  });

  it('at the cap, the least recently used evictable conversation is stopped', () => {
    const views = [
      view('a', { lastActiveAt: 30 }),
      view('b', { lastActiveAt: 10, evictable: false }),
      view('c', { lastActiveAt: 20 }),
    ];
    expect(planSlot(views, 3, 'd', 0)).toEqual({ kind: 'evict', key: 'c' });
  });

  it('at the cap with every process busy, the conversation waits and is to be told', () => {
    const views = [view('a', { evictable: false }), view('b', { evictable: false })];
    expect(planSlot(views, 2, 'c', 0)).toEqual({ kind: 'wait', stopping: false });
  });

  it('a slot being freed counts as taken, and the wait is silent', () => {
    expect(planSlot([view('a')], 2, 'c', 1)).toEqual({ kind: 'wait', stopping: true });
    expect(planSlot([view('a')], 3, 'c', 1)).toEqual({ kind: 'free' });
  });

  it('the asking conversation never evicts itself nor counts against itself', () => {
    expect(planSlot([view('a'), view('c')], 2, 'c', 0)).toEqual({ kind: 'free' });
    expect(
      planSlot(
        [view('c', { lastActiveAt: 0 }), view('a', { lastActiveAt: 5 }), view('b', { lastActiveAt: 9 })],
        2,
        'c',
        0,
      ),
    ).toEqual({
      kind: 'evict',
      key: 'a',
    });
  });

  it('idle: only live, evictable processes quiet for longer than the limit', () => {
    const views = [
      view('old', { lastActiveAt: 0 }),
      view('busy', { lastActiveAt: 0, evictable: false }),
      view('recent', { lastActiveAt: 900 }),
      view('gone', { lastActiveAt: 0, live: false }),
    ];
    expect(idleExpired(views, 500, 1000)).toEqual(['old']);
  });
});

describe('waiting queue', () => {
  const message = (chatId: number, inboundId: string): StartingFrame => ({
    type: 'user_message',
    route: { chatId },
    inboundId,
    telegramMessageId: 1,
    sender: { id: 1, name: 'Ann' },
    text: inboundId,
    attachments: [],
    sentAt: 0,
  });
  const clear = (chatId: number, commandId: string): StartingFrame => ({
    type: 'clear',
    route: { chatId },
    commandId,
  });
  const keyOf = (frame: StartingFrame): string => String(frame.route.chatId);
  const none = new Set<string>();

  it.each([
    { name: 'nothing waits: served', waiting: [], frame: message(1, 'a'), blocked: none, want: 'serve' },
    {
      name: 'another conversation waits: served',
      waiting: [message(2, 'b')],
      frame: message(1, 'a'),
      blocked: none,
      want: 'serve',
    },
    {
      name: 'its conversation waits: queued behind',
      waiting: [message(1, 'b')],
      frame: message(1, 'a'),
      blocked: none,
      want: 'queue',
    },
    {
      name: 'the same message waits (a resend): queued behind itself (delivery drops it when served)',
      waiting: [message(1, 'a')],
      frame: message(1, 'a'),
      blocked: none,
      want: 'queue',
    },
    {
      name: 'another conversation waits: served',
      waiting: [message(2, 'c')],
      frame: clear(1, 'c'),
      blocked: none,
      want: 'serve',
    },
    {
      name: 'its conversation is blocked by a failure: queued',
      waiting: [],
      frame: message(1, 'a'),
      blocked: new Set(['1']),
      want: 'queue',
    },
  ])('$name', ({ waiting, frame, blocked, want }) => {
    expect(arrival(waiting, frame, keyOf, blocked)).toBe(want);
  });

  it('serves the oldest frame of a conversation that is not blocked, keeping each one’s order', () => {
    const waiting = [message(1, 'a'), message(2, 'b'), message(1, 'c'), message(3, 'd')];
    expect(nextToServe(waiting, keyOf, none)).toBe(0);
    expect(nextToServe(waiting, keyOf, new Set(['1']))).toBe(1);
    expect(nextToServe(waiting, keyOf, new Set(['1', '2']))).toBe(3);
    expect(nextToServe(waiting, keyOf, new Set(['1', '2', '3']))).toBeUndefined();
    expect(nextToServe([], keyOf, none)).toBeUndefined();
  });

  it('/stop drops its conversation’s waiting messages, keeps its commands and the others’', () => {
    const waiting = [message(1, 'a'), clear(1, 'c'), message(2, 'b')];
    expect(withoutMessagesOf(waiting, '1', keyOf)).toEqual([clear(1, 'c'), message(2, 'b')]);
  });
});
