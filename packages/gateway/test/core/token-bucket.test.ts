import { describe, expect, it } from 'vitest';
import { bucketCheck, bucketTake, fullBucket } from '../../src/core/telegram/token-bucket.js';

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
