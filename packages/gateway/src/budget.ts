/**
 * The gateway's own send budget per chat, kept below Telegram's limits so that steady use never
 * provokes a 429: about one message a second in a private chat, twenty a minute in a group, thirty a
 * second across all chats — and edits count. Pure arithmetic over an injected clock; the courier
 * asks it when a chat may be written to next.
 *
 * After a 429 for a chat, that chat waits out `retry_after` and its interval is multiplied for
 * `penaltyMs`, so a limit we misjudged is not hit again at once.
 */

/** Tunables; the defaults sit a little under Telegram's published limits. */
export interface BudgetOptions {
  /** Minimum gap between calls to one private chat (positive chat id). Default 1050 ms. */
  privateIntervalMs?: number;
  /** Minimum gap between calls to one group or channel (negative chat id). Default 3100 ms. */
  groupIntervalMs?: number;
  /** Calls allowed across all chats in any one second. Default 25. */
  globalPerSecond?: number;
  /** How long a chat stays tightened after a 429. Default 60 s. */
  penaltyMs?: number;
  /** The interval multiplier while tightened. Default 2. */
  penaltyFactor?: number;
}

/** Per-chat and global pacing; see the module comment. */
export interface Budget {
  /** Milliseconds until a call to `chatId` may go out (0: now). */
  delay(chatId: number, now: number): number;
  /** Records a call to `chatId` at `now`. */
  take(chatId: number, now: number): void;
  /** Records a 429 for `chatId` with Telegram's `retry_after` (seconds). */
  penalize(chatId: number, retryAfterSec: number, now: number): void;
  /** The current minimum gap for `chatId`, for logs and `/status`. */
  interval(chatId: number, now: number): number;
}

interface ChatPace {
  lastAt: number;
  blockedUntil: number;
  tightUntil: number;
}

/** Creates a budget; it holds only timestamps, so one per gateway is enough. */
export function createBudget(options: BudgetOptions = {}): Budget {
  const privateMs = options.privateIntervalMs ?? 1050;
  const groupMs = options.groupIntervalMs ?? 3100;
  const perSecond = options.globalPerSecond ?? 25;
  const penaltyMs = options.penaltyMs ?? 60_000;
  const factor = options.penaltyFactor ?? 2;
  const chats = new Map<number, ChatPace>();
  /** Timestamps of the calls in the last second, oldest first. */
  const recent: number[] = [];

  const pace = (chatId: number): ChatPace => {
    let p = chats.get(chatId);
    if (!p) {
      p = { lastAt: Number.NEGATIVE_INFINITY, blockedUntil: 0, tightUntil: 0 };
      chats.set(chatId, p);
    }
    return p;
  };
  const interval = (chatId: number, now: number): number => {
    const base = chatId < 0 ? groupMs : privateMs;
    return pace(chatId).tightUntil > now ? base * factor : base;
  };

  return {
    interval,
    delay(chatId, now) {
      const p = pace(chatId);
      while (recent.length > 0 && (recent[0] as number) <= now - 1000) recent.shift();
      const globalWait = recent.length >= perSecond ? (recent[0] as number) + 1000 - now : 0;
      const chatWait = Math.max(p.lastAt + interval(chatId, now) - now, p.blockedUntil - now);
      return Math.max(0, globalWait, chatWait);
    },
    take(chatId, now) {
      pace(chatId).lastAt = now;
      recent.push(now);
      if (chats.size > 10_000) {
        // Forget chats idle for a minute; their pacing no longer matters.
        for (const [id, p] of chats) if (p.lastAt < now - 60_000 && p.tightUntil < now) chats.delete(id);
      }
    },
    penalize(chatId, retryAfterSec, now) {
      const p = pace(chatId);
      p.blockedUntil = Math.max(p.blockedUntil, now + retryAfterSec * 1000);
      p.tightUntil = now + penaltyMs;
    },
  };
}
