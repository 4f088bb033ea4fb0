import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createBudget } from '../src/budget.js';
import { createCourier } from '../src/courier.js';

/** A courier over a fresh budget whose waits pass at once on a fake clock (each sleep advances it). */
function fakeClockCourier(): ReturnType<typeof createCourier> {
  let now = 0;
  return createCourier(createBudget(), {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  });
}

describe('budget', () => {
  it('allows a small burst per chat, refills slower in groups, and tightens after a 429', () => {
    const b = createBudget();
    b.take(1, 0);
    expect(b.delay(1, 0)).toBe(0);
    expect(b.delay(1, 0, 1)).toBe(1050); // a low call keeps one token back
    b.take(1, 0);
    expect(b.delay(1, 0)).toBe(1050);
    expect(b.delay(2, 0)).toBe(0);
    b.take(-5, 0);
    b.take(-5, 0);
    expect(b.delay(-5, 1000)).toBe(2100);
    b.penalize(1, 3, 100);
    expect(b.delay(1, 100)).toBe(3000);
    expect(b.interval(1, 5000)).toBe(2100);
    expect(b.interval(1, 70_000)).toBe(1050);
  });

  it('caps calls across all chats per second', () => {
    const b = createBudget({ globalPerSecond: 3 });
    for (let chat = 1; chat <= 3; chat++) b.take(chat, 0);
    expect(b.delay(99, 10)).toBe(990);
  });
});

describe('courier', () => {
  it('drops stale keyed calls in favour of the latest, never queueing them', async () => {
    const courier = fakeClockCourier();
    const ran: string[] = [];
    const calls = ['a', 'b', 'c', 'd'].map((t) =>
      courier.call(
        1,
        async () => {
          ran.push(t);
          return t;
        },
        { key: 'edit', priority: 'low' },
      ),
    );
    const results = await Promise.all(calls);
    // The first started at once; b and c were superseded while waiting for the budget; d ran.
    expect(ran).toEqual(['a', 'd']);
    expect(results).toEqual(['a', undefined, undefined, 'd']);
  });

  it('runs urgent calls before pending low ones', async () => {
    const courier = fakeClockCourier();
    const ran: string[] = [];
    const first = courier.call(1, async () => ran.push('first'));
    const low = courier.call(1, async () => ran.push('low'), { priority: 'low' });
    const urgent = courier.call(1, async () => ran.push('urgent'), { priority: 'urgent' });
    await Promise.all([first, low, urgent]);
    expect(ran).toEqual(['first', 'urgent', 'low']);
  });

  it('runs high calls (a card closing) before normal replies, and promotes a queued low call', async () => {
    const courier = fakeClockCourier();
    const ran: string[] = [];
    const first = courier.call(1, async () => ran.push('first'));
    const live = courier.call(1, async () => ran.push('card edit'), { priority: 'low', key: 'card:1' });
    const replies = [1, 2, 3].map((n) => courier.call(1, async () => ran.push(`reply ${n}`)));
    const unpin = courier.call(1, async () => ran.push('unpin'), { priority: 'high' });
    expect(courier.promote(1, 'card:1', 'high')).toBe(true);
    expect(courier.promote(1, 'card:2', 'high')).toBe(false);
    await Promise.all([first, live, unpin, ...replies]);
    expect(ran).toEqual(['first', 'card edit', 'unpin', 'reply 1', 'reply 2', 'reply 3']);
  });
});

describe('courier on the gateway clock', () => {
  it("holds a chat's third call until the manual clock reaches the budget's refill, with no real wait", async () => {
    const clock = new ManualClock();
    const courier = createCourier(createBudget(), clock);
    const ranAt: number[] = [];
    const calls = [1, 2, 3].map(() => courier.call(1, async () => ranAt.push(clock.now())));
    await clock.advanceAsync(1000);
    expect(ranAt).toEqual([0, 0]);
    await clock.advanceAsync(100);
    await Promise.all(calls);
    expect(ranAt).toHaveLength(3);
    expect(ranAt[2]).toBeGreaterThanOrEqual(1050);
    expect(ranAt[2]).toBeLessThanOrEqual(1100);
  });
});
