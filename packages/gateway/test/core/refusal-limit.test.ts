/**
 * The webhook receiver's per-address refusal limit (`core/automation/refusal-limit.ts`) on a manual
 * time: strikes within the window block, the block ends, strikes out of the window are forgotten, and
 * the memory stays within its cap.
 */
import { describe, expect, it } from 'vitest';
import { createRefusalLimit, DEFAULT_REFUSAL_LIMITS } from '../../src/core/automation/refusal-limit.js';

const limits = { strikes: 3, windowMs: 1_000, blockMs: 10_000, maxAddresses: 5 };

describe('refusal limit', () => {
  it('the default: 10 refusals within a minute block an address for 10 minutes', () => {
    expect(DEFAULT_REFUSAL_LIMITS).toMatchObject({ strikes: 10, windowMs: 60_000, blockMs: 600_000 });
  });

  it('strikes within the window block the address, and only that one, until the block ends', () => {
    const limit = createRefusalLimit(limits);
    expect(limit.refused('a', 0)).toBe(false);
    expect(limit.refused('a', 100)).toBe(false);
    expect(limit.check('a', 200)).toEqual({ ok: true });
    expect(limit.refused('a', 200)).toBe(true);
    expect(limit.check('a', 200)).toEqual({ ok: false, retryAfterSec: 10 });
    expect(limit.check('a', 9_300)).toEqual({ ok: false, retryAfterSec: 1 });
    expect(limit.check('b', 300)).toEqual({ ok: true });
    expect(limit.check('a', 10_200)).toEqual({ ok: true });
    // After the block it starts from no strikes.
    expect(limit.refused('a', 10_300)).toBe(false);
  });

  it('strikes further apart than the window never block', () => {
    const limit = createRefusalLimit(limits);
    for (let at = 0; at < 20_000; at += 600) expect(limit.refused('a', at)).toBe(false);
    expect(limit.check('a', 20_000)).toEqual({ ok: true });
  });

  it('remembers at most maxAddresses, forgetting the oldest first; a blocked address stays when it is new', () => {
    const limit = createRefusalLimit(limits);
    for (let i = 0; i < 3; i++) limit.refused('blocked', i);
    for (let i = 0; i < 20; i++) limit.refused(`x${i}`, 10 + i);
    expect(limit.size()).toBeLessThanOrEqual(5);
    // A thousand addresses later, memory is still capped.
    for (let i = 0; i < 1000; i++) limit.refused(`y${i}`, 100 + i);
    expect(limit.size()).toBeLessThanOrEqual(5);
  });

  it('an address whose strikes left the window is forgotten', () => {
    const limit = createRefusalLimit(limits);
    limit.refused('a', 0);
    limit.refused('b', 5_000);
    expect(limit.size()).toBe(1);
  });
});
