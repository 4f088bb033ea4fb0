import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createBudget } from '../src/core/telegram/send-pacing.js';
import { createCourier } from '../src/io/telegram/courier.js';

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
  it('lets a group spend a burst of its window at once, then holds the next call until the oldest leaves', () => {
    const b = createBudget();
    for (let i = 0; i < 18; i++) {
      expect(b.delay(-5, i * 100)).toBe(0);
      b.take(-5, i * 100);
    }
    // 18 in any 66 s: the 19th waits until the first call (at 0) leaves the window.
    expect(b.delay(-5, 2000)).toBe(64_000);
    // A cosmetic call leaves six slots to content: it fits once seven have left (the 7th oldest at 600).
    expect(b.delay(-5, 2000, { reserve: 6 })).toBe(600 + 66_000 - 2000);
    expect(b.delay(-6, 2000)).toBe(0);
  });

  it('paces a private chat at three in any 3.3 s, and reactions in a window of their own', () => {
    const b = createBudget();
    for (const at of [0, 10, 20]) b.take(1, at);
    expect(b.delay(1, 30)).toBe(3270);
    expect(b.delay(1, 30, { kind: 'reaction' })).toBe(0);
    for (let i = 0; i < 16; i++) b.take(1, 100 + i, 'reaction');
    expect(b.delay(1, 200, { kind: 'reaction' })).toBe(100 + 11_000 - 200);
    // Half the window left to final states: a passing state waits for the 9th oldest to leave.
    expect(b.delay(1, 200, { kind: 'reaction', reserve: 8 })).toBe(108 + 11_000 - 200);
  });

  it('waits out retry_after after a 429, then holds half its window until the penalty ends', () => {
    const b = createBudget();
    b.penalize(1, 3, 100);
    expect(b.delay(1, 100)).toBe(3000);
    expect(b.windows(1, 5000)).toEqual([{ limit: 1, periodMs: 3300 }]);
    expect(b.windows(1, 70_000)).toEqual([{ limit: 3, periodMs: 3300 }]);
  });

  it('caps calls across all chats per second', () => {
    const b = createBudget({ globalPerSecond: 3 });
    for (let chat = 1; chat <= 3; chat++) b.take(chat, 0);
    expect(b.delay(99, 10)).toBe(990);
  });

  it('runs ten times faster with scale 0.1 (the harness)', () => {
    const b = createBudget({ scale: 0.1 });
    for (const at of [0, 1, 2]) b.take(1, at);
    expect(b.delay(1, 3)).toBe(327);
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
        { key: 'edit', priority: 'stream' },
      ),
    );
    const results = await Promise.all(calls);
    // The first started at once; b and c were superseded while waiting for the budget; d ran.
    expect(ran).toEqual(['a', 'd']);
    expect(results).toEqual(['a', undefined, undefined, 'd']);
  });

  it('runs prompts before pending streamed edits', async () => {
    const courier = fakeClockCourier();
    const ran: string[] = [];
    const first = courier.call(1, async () => ran.push('first'));
    const low = courier.call(1, async () => ran.push('stream'), { priority: 'stream' });
    const prompt = courier.call(1, async () => ran.push('prompt'), { priority: 'prompt' });
    await Promise.all([first, low, prompt]);
    expect(ran).toEqual(['first', 'prompt', 'stream']);
  });

  it('runs answers before queued cosmetics, a closing card first among them, and promotes a queued edit', async () => {
    const courier = fakeClockCourier();
    const ran: string[] = [];
    const first = courier.call(1, async () => ran.push('first'));
    const live = courier.call(1, async () => ran.push('card edit'), { priority: 'stream', key: 'card:1' });
    const reaction = courier.call(1, async () => ran.push('reaction'), { priority: 'cosmetic' });
    const replies = [1, 2, 3].map((n) => courier.call(1, async () => ran.push(`reply ${n}`)));
    const unpin = courier.call(1, async () => ran.push('unpin'), { priority: 'closing' });
    expect(courier.promote(1, 'card:1', 'closing')).toBe(true);
    expect(courier.promote(1, 'card:2', 'closing')).toBe(false);
    await Promise.all([first, live, reaction, unpin, ...replies]);
    expect(ran).toEqual(['first', 'reply 1', 'reply 2', 'reply 3', 'card edit', 'unpin', 'reaction']);
  });

  it('drops a cosmetic call that is stale when its turn comes, spending nothing', async () => {
    const clock = new ManualClock();
    const budget = createBudget();
    const courier = createCourier(budget, clock);
    let state = 'waiting';
    const ran: string[] = [];
    const answer = courier.call(1, async () => ran.push('answer'));
    const eyes = courier.call(1, async () => ran.push('👀'), {
      priority: 'cosmetic',
      spends: 'reaction',
      stale: () => state !== 'waiting',
    });
    state = 'read';
    expect(await answer).toBe(1);
    expect(await eyes).toBeUndefined();
    expect(ran).toEqual(['answer']);
    expect(budget.delay(1, clock.now(), { kind: 'reaction' })).toBe(0);
  });

  it('lets a reaction go while an answer waits for the chat’s message window', async () => {
    const clock = new ManualClock();
    const budget = createBudget();
    for (const at of [0, 0, 0]) budget.take(1, at);
    const courier = createCourier(budget, clock);
    const ran: string[] = [];
    const answer = courier.call(1, async () => ran.push(`answer at ${clock.now()}`));
    const reaction = courier.call(1, async () => ran.push(`reaction at ${clock.now()}`), {
      priority: 'cosmetic',
      spends: 'reaction',
    });
    await clock.advanceAsync(3400);
    await Promise.all([answer, reaction]);
    // The lane looks again every 100 ms: the reaction goes at its first look, the answer when it fits.
    expect(ran[0]).toBe('reaction at 100');
    expect(ran[1]).toMatch(/^answer at 3[34]\d\d$/);
  });
});

describe('courier on the gateway clock', () => {
  it("holds a chat's fourth call until the manual clock moves the first out of the window, with no real wait", async () => {
    const clock = new ManualClock();
    const courier = createCourier(createBudget(), clock);
    const ranAt: number[] = [];
    const calls = [1, 2, 3, 4].map(() => courier.call(1, async () => ranAt.push(clock.now())));
    await clock.advanceAsync(3200);
    expect(ranAt).toEqual([0, 0, 0]);
    await clock.advanceAsync(200);
    await Promise.all(calls);
    expect(ranAt).toHaveLength(4);
    expect(ranAt[3]).toBeGreaterThanOrEqual(3300);
    expect(ranAt[3]).toBeLessThanOrEqual(3400);
  });
});
