/**
 * Telegram's flood limits for bots, as token buckets: about one message a second per private chat
 * (with a small burst), twenty a minute per group, thirty a second across all chats. Sends and edits
 * both spend a token. Pure: time comes from an injected clock, nothing is scheduled.
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
  /** Per group or supergroup. Default: burst 20, twenty a minute. */
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
}

/** Telegram-like defaults: steady use by a well-behaved bot never meets them. */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  privateChat: { burst: 3, perSecond: 1 },
  groupChat: { burst: 20, perSecond: 20 / 60 },
  global: { burst: 30, perSecond: 30 },
  draft: { burst: 2, perSecond: 2 },
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
  take(chatId: number, isGroup: boolean, kind: 'message' | 'draft' = 'message'): RateDecision {
    const limits = this.#limits;
    if (!limits) return { allowed: true };
    const now = this.#now();
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
