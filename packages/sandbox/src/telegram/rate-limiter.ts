/**
 * Telegram's flood limits for bots: about one message a second per private chat (a token bucket with a
 * small burst), twenty in any minute per group (a sliding window: a burst of twenty is fine, the
 * twenty-first within the minute is a 429 until the oldest leaves the window), thirty a second across
 * all chats. Sends and edits both spend a slot. Reactions (`setMessageReaction`) are not messages:
 * they spend a window of their own per chat (Telegram publishes no number; the sandbox assumes twenty
 * in any ten seconds) and the global bucket. Pure: time comes from an injected clock.
 */

/** One bucket's shape: `burst` tokens at most, refilled at `perSecond`. */
export interface BucketRate {
  burst: number;
  perSecond: number;
}

/** The limits the server enforces; tests tighten or loosen them. */
export interface RateLimits {
  /** Per private chat. Default: burst 3, one a second. */
  privateChat: BucketRate;
  /**
   * Per group or supergroup, as a sliding window of `burst` calls in any `burst / perSecond` seconds.
   * Default: twenty in any minute.
   */
  groupChat: BucketRate;
  /** Across all chats. Default: burst 30, thirty a second. */
  global: BucketRate;
  /**
   * Drafts (`sendMessageDraft`, `sendRichMessageDraft`) per private chat, a bucket of their own: they
   * are not messages. Telegram documents no number; bots streaming a draft every 300 ms (3.3/s) were
   * answered 429 with `retry_after` 3 (public reports, 2026), so the sandbox allows two a second with a
   * burst of 2. Default: burst 2, two a second.
   */
  draft: BucketRate;
  /**
   * Reactions per chat, a sliding window like a group's (`burst` in any `burst / perSecond` s): an
   * assumption, as Telegram publishes none. Default: twenty in any ten seconds.
   */
  reaction?: BucketRate;
}

/** Telegram-like defaults: steady use by a well-behaved bot never meets them. */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  privateChat: { burst: 3, perSecond: 1 },
  groupChat: { burst: 20, perSecond: 20 / 60 },
  global: { burst: 30, perSecond: 30 },
  draft: { burst: 2, perSecond: 2 },
  reaction: { burst: 20, perSecond: 2 },
};

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** What the limiter decided for one request. */
export type RateDecision =
  | { allowed: true }
  | { allowed: false; retryAfter: number; scope: 'chat' | 'global' };

/**
 * Per-chat and global token buckets. {@link RateLimiter.take} spends one token from the chat's bucket
 * and the global one, or neither when either is empty, and then says how many whole seconds to wait
 * (at least 1, as Telegram never says 0).
 */
export class RateLimiter {
  #limits: RateLimits | undefined;
  readonly #now: () => number;
  readonly #chats = new Map<number, Bucket>();
  readonly #drafts = new Map<number, Bucket>();
  /** Sliding windows: the times of the calls each chat's window still sees, oldest first. */
  readonly #windows = new Map<string, number[]>();
  #global: Bucket | undefined;

  /** `limits` undefined disables limiting; `now` returns milliseconds. */
  constructor(limits: RateLimits | undefined, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Replaces the limits (merged over the current ones), or disables limiting with `false`. Buckets restart full. */
  configure(limits: Partial<RateLimits> | false): void {
    this.#limits = limits === false ? undefined : { ...(this.#limits ?? DEFAULT_RATE_LIMITS), ...limits };
    this.#chats.clear();
    this.#drafts.clear();
    this.#windows.clear();
    this.#global = undefined;
  }

  /** The limits in force, or undefined when limiting is off. */
  get limits(): RateLimits | undefined {
    return this.#limits;
  }

  /**
   * Spends a token for one send or edit in `chatId` (`isGroup` picks the group limit), or for one draft
   * (`kind: 'draft'`, from the chat's draft bucket).
   */
  take(chatId: number, isGroup: boolean, kind: 'message' | 'draft' | 'reaction' = 'message'): RateDecision {
    const limits = this.#limits;
    if (!limits) return { allowed: true };
    const now = this.#now();
    if (kind === 'reaction' || (kind === 'message' && isGroup)) {
      const rate = kind === 'reaction' ? (limits.reaction ?? DEFAULT_RATE_LIMITS.reaction) : limits.groupChat;
      return this.#window(`${kind}:${chatId}`, rate as BucketRate, limits.global, now);
    }
    const chatRate =
      kind === 'draft'
        ? (limits.draft ?? DEFAULT_RATE_LIMITS.draft)
        : isGroup
          ? limits.groupChat
          : limits.privateChat;
    const buckets = kind === 'draft' ? this.#drafts : this.#chats;
    const chat = this.#refill(buckets.get(chatId), chatRate, now);
    buckets.set(chatId, chat);
    const global = this.#refill(this.#global, limits.global, now);
    this.#global = global;
    if (chat.tokens < 1) return { allowed: false, retryAfter: wait(chat, chatRate), scope: 'chat' };
    if (global.tokens < 1)
      return { allowed: false, retryAfter: wait(global, limits.global), scope: 'global' };
    chat.tokens -= 1;
    global.tokens -= 1;
    return { allowed: true };
  }

  /** One call in a sliding window of `rate.burst` calls per `rate.burst / rate.perSecond` s, and the global bucket. */
  #window(key: string, rate: BucketRate, globalRate: BucketRate, now: number): RateDecision {
    const periodMs = rate.perSecond <= 0 ? Number.POSITIVE_INFINITY : (rate.burst / rate.perSecond) * 1000;
    const seen = (this.#windows.get(key) ?? []).filter((t) => t > now - periodMs);
    this.#windows.set(key, seen);
    if (seen.length >= rate.burst) {
      const oldest = seen[seen.length - rate.burst] as number;
      const retryAfter = Number.isFinite(periodMs)
        ? Math.max(1, Math.ceil((oldest + periodMs - now) / 1000))
        : 3600;
      return { allowed: false, retryAfter, scope: 'chat' };
    }
    const global = this.#refill(this.#global, globalRate, now);
    this.#global = global;
    if (global.tokens < 1) return { allowed: false, retryAfter: wait(global, globalRate), scope: 'global' };
    global.tokens -= 1;
    seen.push(now);
    return { allowed: true };
  }

  #refill(bucket: Bucket | undefined, rate: BucketRate, now: number): Bucket {
    if (!bucket) return { tokens: rate.burst, updatedAt: now };
    const elapsed = Math.max(0, now - bucket.updatedAt) / 1000;
    return { tokens: Math.min(rate.burst, bucket.tokens + elapsed * rate.perSecond), updatedAt: now };
  }
}

function wait(bucket: Bucket, rate: BucketRate): number {
  if (rate.perSecond <= 0) return 3600;
  return Math.max(1, Math.ceil((1 - bucket.tokens) / rate.perSecond));
}
