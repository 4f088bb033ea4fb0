/**
 * The gateway's own send budget per chat, kept below Telegram's limits so that steady use never
 * provokes a 429: about one message a second in a private chat, twenty a minute in a group, thirty a
 * second across all chats — and edits count. Pure arithmetic over an injected clock; the courier
 * asks it when a chat may be written to next.
 *
 * After a 429 for a chat, that chat waits out `retry_after` and its interval is multiplied for
 * `penaltyMs`, so a limit we misjudged is not hit again at once.
 *
 * Drafts are not messages and do not spend this budget; they have their own bucket per private chat,
 * {@link createDraftPacer}, read with the same clock's time by the reply shell.
 */

import { DRAFT_EVERY_MS } from './core/reply-state.js';

/** Tunables; the defaults sit a little under Telegram's published limits. */
export interface BudgetOptions {
  /** Refill interval of a private chat's bucket (positive chat id). Default 1050 ms. */
  privateIntervalMs?: number;
  /** Refill interval of a group's bucket (negative chat id). Default 3100 ms. */
  groupIntervalMs?: number;
  /** Bucket size: calls a rested chat may make at once. Default 2. */
  burst?: number;
  /** Calls allowed across all chats in any one second. Default 25. */
  globalPerSecond?: number;
  /** How long a chat stays tightened after a 429. Default 60 s. */
  penaltyMs?: number;
  /** The interval multiplier while tightened. Default 2. */
  penaltyFactor?: number;
}

/** Per-chat and global pacing; see the module comment. */
export interface Budget {
  /**
   * Milliseconds until a call to `chatId` may go out (0: now). `reserve` tokens are kept back for
   * more urgent calls: streamed edits pass 1 so that a new placeholder never waits behind them.
   */
  delay(chatId: number, now: number, reserve?: number): number;
  /** Records a call to `chatId` at `now`. */
  take(chatId: number, now: number): void;
  /** Records a 429 for `chatId` with Telegram's `retry_after` (seconds). */
  penalize(chatId: number, retryAfterSec: number, now: number): void;
  /** The current refill interval for `chatId`, for logs and `/status`. */
  interval(chatId: number, now: number): number;
}

interface ChatPace {
  tokens: number;
  updatedAt: number;
  blockedUntil: number;
  tightUntil: number;
}

/** Creates a budget; it holds only timestamps, so one per gateway is enough. */
export function createBudget(options: BudgetOptions = {}): Budget {
  const privateMs = options.privateIntervalMs ?? 1050;
  const groupMs = options.groupIntervalMs ?? 3100;
  const burst = Math.max(1, options.burst ?? 2);
  const perSecond = options.globalPerSecond ?? 25;
  const penaltyMs = options.penaltyMs ?? 60_000;
  const factor = options.penaltyFactor ?? 2;
  const chats = new Map<number, ChatPace>();
  /** Timestamps of the calls in the last second, oldest first. */
  const recent: number[] = [];

  const interval = (chatId: number, now: number): number => {
    const base = chatId < 0 ? groupMs : privateMs;
    return (chats.get(chatId)?.tightUntil ?? 0) > now ? base * factor : base;
  };
  /** The chat's bucket, refilled up to `now`. */
  const pace = (chatId: number, now: number): ChatPace => {
    let p = chats.get(chatId);
    if (!p) {
      p = { tokens: burst, updatedAt: now, blockedUntil: 0, tightUntil: 0 };
      chats.set(chatId, p);
    }
    if (now > p.updatedAt) {
      p.tokens = Math.min(burst, p.tokens + (now - p.updatedAt) / interval(chatId, now));
      p.updatedAt = now;
    }
    return p;
  };

  return {
    interval,
    delay(chatId, now, reserve = 0) {
      const p = pace(chatId, now);
      while (recent.length > 0 && (recent[0] as number) <= now - 1000) recent.shift();
      const globalWait = recent.length >= perSecond ? (recent[0] as number) + 1000 - now : 0;
      const need = Math.min(burst, 1 + reserve);
      const chatWait = p.tokens >= need ? 0 : Math.ceil((need - p.tokens) * interval(chatId, now));
      return Math.max(0, globalWait, chatWait, p.blockedUntil - now);
    },
    take(chatId, now) {
      const p = pace(chatId, now);
      p.tokens -= 1;
      recent.push(now);
      if (chats.size > 10_000) {
        // Forget rested chats; a full bucket is what a new entry starts with anyway.
        for (const [id, c] of chats) if (c.tokens >= burst && c.tightUntil < now) chats.delete(id);
      }
    },
    penalize(chatId, retryAfterSec, now) {
      const p = pace(chatId, now);
      p.blockedUntil = Math.max(p.blockedUntil, now + retryAfterSec * 1000);
      p.tightUntil = now + penaltyMs;
      p.tokens = 0;
    },
  };
}

/** Drafts a rested chat may send at once ("Thinking…" and the first words). */
export const DRAFT_BURST = 2;

/**
 * Drafts per private chat, across replies (a new message's "Thinking…" can follow the previous reply's
 * last draft at once): a bucket of `burst` refilled one per `everyMs` (Telegram documents no draft
 * limit; bots drafting every 300 ms were answered 429).
 */
export interface DraftPacer {
  /** Milliseconds until a draft may go to `chatId` (0: now). */
  delay(chatId: number, now: number): number;
  /** Records a draft to `chatId` at `now`. */
  take(chatId: number, now: number): void;
}

/** Creates the per-chat draft bucket; pure arithmetic over the times it is given. */
export function createDraftPacer(everyMs = DRAFT_EVERY_MS, burst = DRAFT_BURST): DraftPacer {
  const chats = new Map<number, { tokens: number; at: number }>();
  const refill = (chatId: number, now: number) => {
    const c = chats.get(chatId) ?? { tokens: burst, at: now };
    c.tokens = Math.min(burst, c.tokens + Math.max(0, now - c.at) / everyMs);
    c.at = now;
    chats.set(chatId, c);
    return c;
  };
  return {
    delay(chatId, now) {
      const c = refill(chatId, now);
      return c.tokens >= 1 ? 0 : Math.ceil((1 - c.tokens) * everyMs);
    },
    take(chatId, now) {
      refill(chatId, now).tokens -= 1;
      if (chats.size > 10_000) for (const [id, c] of chats) if (c.tokens >= burst) chats.delete(id);
    },
  };
}
