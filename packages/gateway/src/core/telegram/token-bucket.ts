/**
 * A token bucket as pure arithmetic over the caller's `now`: what rate-limits each webhook, so a flood of
 * deliveries to one hook never fills its chat with runs (and never starves the chat's own messages).
 *
 * Contract: a bucket holds at most `burst` tokens and gains `perMinute / 60_000` tokens a millisecond;
 * {@link bucketCheck} says whether one token is there without taking it, {@link bucketTake} takes it.
 * The two are separate so a caller can ask first, do work that may turn out to need no token (a
 * delivery seen before), and take the token only for what it accepted. States are values: a call never
 * changes the state it was given.
 */

/** How a bucket fills. */
export interface BucketLimits {
  /** Tokens gained a minute (> 0). */
  perMinute: number;
  /** Tokens held at most, and at the start (≥ 1). */
  burst: number;
}

/** A bucket's level at a moment. */
export interface BucketState {
  tokens: number;
  /** When `tokens` was true (epoch ms). */
  at: number;
}

/** A full bucket at `now`. */
export function fullBucket(limits: BucketLimits, now: number): BucketState {
  return { tokens: limits.burst, at: now };
}

/** The bucket's level at `now` (never more than `burst`; a clock read earlier than `at` adds nothing). */
export function bucketLevel(state: BucketState, limits: BucketLimits, now: number): BucketState {
  const elapsed = Math.max(0, now - state.at);
  return {
    tokens: Math.min(limits.burst, state.tokens + (elapsed * limits.perMinute) / 60_000),
    at: Math.max(now, state.at),
  };
}

/** Whether a token is there at `now`: `ok`, or how long until one is (ms, > 0). */
export function bucketCheck(
  state: BucketState,
  limits: BucketLimits,
  now: number,
): { ok: true } | { ok: false; retryAfterMs: number } {
  const level = bucketLevel(state, limits, now);
  if (level.tokens >= 1) return { ok: true };
  return { ok: false, retryAfterMs: Math.ceil(((1 - level.tokens) * 60_000) / limits.perMinute) };
}

/** The bucket after one token is taken at `now`; `undefined` when none is there (see {@link bucketCheck}). */
export function bucketTake(state: BucketState, limits: BucketLimits, now: number): BucketState | undefined {
  const level = bucketLevel(state, limits, now);
  if (level.tokens < 1) return undefined;
  return { tokens: level.tokens - 1, at: level.at };
}
