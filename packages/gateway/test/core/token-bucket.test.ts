import { describe, expect, it } from 'vitest';
import { type PaceWindow, windowDelay } from '../../src/core/telegram/pace-windows.js';
import { bucketCheck, bucketSpend, bucketTake, fullBucket } from '../../src/core/telegram/token-bucket.js';

const LIMITS = { perMinute: 6, burst: 2 }; // one token every 10 s

describe('token bucket (a hook’s rate)', () => {
  it.each([
    ['a full bucket gives its burst, then says how long to wait', 0, [true, true, false], 10_000],
    ['after the wait one more token is there', 10_000, [true, true, true, false], 10_000],
  ])('%s', (_what, laterMs, expected, retry) => {
    let state = fullBucket(LIMITS, 0);
    const seen: boolean[] = [];
    for (const _ of expected) {
      const at = seen.length >= 2 ? laterMs : 0;
      const next = bucketTake(state, LIMITS, at);
      seen.push(next !== undefined);
      if (next) state = next;
    }
    expect(seen).toEqual(expected);
    const check = bucketCheck(state, LIMITS, laterMs);
    expect(check).toEqual({ ok: false, retryAfterMs: retry });
  });

  it('never holds more than its burst, however long it waited', () => {
    const state = fullBucket(LIMITS, 0);
    const a = bucketTake(state, LIMITS, 3_600_000);
    const b = a && bucketTake(a, LIMITS, 3_600_000);
    const c = b && bucketTake(b, LIMITS, 3_600_000);
    expect([a, b, c].map((s) => s !== undefined)).toEqual([true, true, false]);
  });

  it('check takes nothing; a clock read before the last take adds nothing', () => {
    const state = fullBucket({ perMinute: 60, burst: 1 }, 1000);
    expect(bucketCheck(state, { perMinute: 60, burst: 1 }, 1000)).toEqual({ ok: true });
    const taken = bucketTake(state, { perMinute: 60, burst: 1 }, 1000);
    expect(taken).toBeDefined();
    if (!taken) return;
    expect(bucketCheck(taken, { perMinute: 60, burst: 1 }, 500)).toEqual({ ok: false, retryAfterMs: 1000 });
    expect(bucketCheck(taken, { perMinute: 60, burst: 1 }, 1600)).toEqual({ ok: false, retryAfterMs: 400 });
    expect(bucketCheck(taken, { perMinute: 60, burst: 1 }, 2000)).toEqual({ ok: true });
  });
});

describe('a bucket is a pacing shape of its own, not a set of windows', () => {
  // Drafts: a burst of 2, then one every 600 ms. Windows run over the same calls for comparison.
  const DRAFTS = { perMinute: 100, burst: 2 };
  /** When each of `n` calls asked for as early as possible goes, under a pacing's `delay` and `take`. */
  const times = (n: number, delay: (at: number) => number, take: (at: number) => void): number[] => {
    const out: number[] = [];
    let at = 0;
    for (let i = 0; i < n; i++) {
      at += delay(at);
      take(at);
      out.push(at);
    }
    return out;
  };
  const bucketTimes = (n: number): number[] => {
    let state = fullBucket(DRAFTS, 0);
    return times(
      n,
      (at) => {
        const check = bucketCheck(state, DRAFTS, at);
        return check.ok ? 0 : check.retryAfterMs;
      },
      (at) => {
        state = bucketSpend(state, DRAFTS, at);
      },
    );
  };
  const windowTimes = (n: number, windows: readonly PaceWindow[]): number[] => {
    const taken: number[] = [];
    return times(
      n,
      (at) => windowDelay(taken, windows, at),
      (at) => void taken.push(at),
    );
  };

  it('the bucket lets its burst through, then spaces calls one period apart', () => {
    expect(bucketTimes(6)).toEqual([0, 0, 600, 1200, 1800, 2400]);
  });

  it('the windows with its burst and rate let the burst through again each period instead', () => {
    expect(windowTimes(6, [{ limit: 2, periodMs: 1200 }])).toEqual([0, 0, 1200, 1200, 2400, 2400]);
  });

  it('adding a window of one call per period spaces them, but forbids the burst', () => {
    const both = [
      { limit: 2, periodMs: 1200 },
      { limit: 1, periodMs: 600 },
    ];
    expect(windowTimes(6, both)).toEqual([0, 600, 1200, 1800, 2400, 3000]);
  });

  it('a call made whatever the level spends below zero, and the next token is that much further', () => {
    const empty = bucketSpend(bucketSpend(fullBucket(DRAFTS, 0), DRAFTS, 0), DRAFTS, 0);
    expect(bucketCheck(empty, DRAFTS, 0)).toEqual({ ok: false, retryAfterMs: 600 });
    const owing = bucketSpend(bucketSpend(empty, DRAFTS, 300), DRAFTS, 300);
    expect(owing.tokens).toBeCloseTo(-1.5);
    expect(bucketCheck(owing, DRAFTS, 300)).toEqual({ ok: false, retryAfterMs: 1500 });
    expect(bucketTake(owing, DRAFTS, 300)).toBeUndefined();
  });
});
