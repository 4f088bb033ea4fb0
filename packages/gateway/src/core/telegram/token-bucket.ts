/**
 * A token bucket as pure arithmetic over the caller's `now`: the gateway's pacing for what has a rate
 * and no published window — each webhook (a flood of deliveries to one hook never fills its chat with
 * runs, nor starves the chat's own messages) and each private chat's drafts (`send-pacing.ts`'s draft
 * pacer: Telegram documents no draft limit; bots drafting every 300 ms were answered 429).
 *
 * Why a bucket beside the windows of `pace-windows.ts`, and not one of them: a window counts the calls
 * of the last `periodMs` and lets `limit` of them through at once, again and again — the shape in which
 * Telegram publishes its message limits. A bucket holds a burst and then spaces calls out at its rate.
 * No finite set of windows is a bucket: the windows with its burst and its rate ({burst in
 * burst × every}) let the burst through again each period where the bucket spaces calls one `every`
 * apart, and adding {1 in every} forbids the burst (`test/core/token-bucket.test.ts` shows both). A
 * bucket of burst b is the windows {b - 1 + k in k × every} for every k ≥ 1 at once: infinitely many.
 *
 * Contract: a bucket holds at most `burst` tokens and gains one every `60_000 / perMinute` ms;
 * {@link bucketCheck} says whether one token is there without taking it, {@link bucketTake} takes it,
 * {@link bucketSpend} records a call made whatever the level (the level may go below zero, and the
 * next token is that much further off). Check and take are separate so a caller can ask first, do work
 * that may turn out to need no token (a delivery seen before), and take the token only for what it
 * accepted. States are values: a call never changes the state it was given.
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
    tokens: Math.min(limits.burst, state.tokens + elapsed / msPerToken(limits)),
    at: Math.max(now, state.at),
  };
}

/** How long one token takes to come (ms). */
function msPerToken(limits: BucketLimits): number {
  return 60_000 / limits.perMinute;
}

/** Whether a token is there at `now`: `ok`, or how long until one is (ms, > 0). */
export function bucketCheck(
  state: BucketState,
  limits: BucketLimits,
  now: number,
): { ok: true } | { ok: false; retryAfterMs: number } {
  const level = bucketLevel(state, limits, now);
  if (level.tokens >= 1) return { ok: true };
  return { ok: false, retryAfterMs: Math.ceil((1 - level.tokens) * msPerToken(limits)) };
}

/** The bucket after one token is taken at `now`; `undefined` when none is there (see {@link bucketCheck}). */
export function bucketTake(state: BucketState, limits: BucketLimits, now: number): BucketState | undefined {
  const level = bucketLevel(state, limits, now);
  if (level.tokens < 1) return undefined;
  return { tokens: level.tokens - 1, at: level.at };
}

/** The bucket after a call at `now` made whatever its level: one token spent, perhaps below zero. */
export function bucketSpend(state: BucketState, limits: BucketLimits, now: number): BucketState {
  const level = bucketLevel(state, limits, now);
  return { tokens: level.tokens - 1, at: level.at };
}
