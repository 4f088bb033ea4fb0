import { describe, expect, it } from 'vitest';
import { idleExpired, planSlot, type SlotView } from '../src/core/pool.js';

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
