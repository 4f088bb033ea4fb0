/**
 * The gateway's own send budget per chat, as sliding windows under Telegram's published limits
 * (`pace-windows.ts` has the model, the limits and the margins): 18 messages in any 66 s in a
 * group, three in any 3.3 s in a private chat, 25 a second across all chats — edits count — and a
 * window of its own for a chat's reactions. The courier asks it when a chat may be written to next; it
 * is the only pacing of chat-bound calls (replies, markers, reactions, the card, prompts).
 *
 * After a 429 for a chat, that chat waits out `retry_after` and its windows hold half their calls for
 * `penaltyMs`, so a limit we misjudged is not hit again at once.
 *
 * Drafts are not messages and do not spend this budget; they have their own bucket per private chat,
 * {@link createDraftPacer} (the bucket of `token-bucket.ts`, which says why drafts are paced by a rate
 * and not by windows), read through the same two questions — how long, and this call went — with the
 * same clock's time by the reply shell.
 */

import { DRAFT_EVERY_MS } from '../reply/reply-state.js';
import {
  GATEWAY_WINDOWS,
  type PaceKind,
  type PaceWindow,
  pruneTimes,
  scaled,
  tightened,
  windowDelay,
} from './pace-windows.js';
import {
  type BucketLimits,
  type BucketState,
  bucketCheck,
  bucketLevel,
  bucketSpend,
  fullBucket,
} from './token-bucket.js';

/** Tunables; the defaults are {@link GATEWAY_WINDOWS}. */
export interface BudgetOptions {
  /** Multiplies every window's period (tests run Telegram's clock ten times faster: 0.1). Default 1. */
  scale?: number;
  /** Calls allowed across all chats in any one second (before `scale`). Default 25. */
  globalPerSecond?: number;
  /** How long a chat stays tightened after a 429. Default 60 s. */
  penaltyMs?: number;
  /** What a tightened chat's window limits are divided by. Default 2. */
  penaltyFactor?: number;
}

/** Per-call pacing questions; `kind` picks the windows (default `message`). */
export interface PaceAsk {
  kind?: PaceKind;
  /** Slots of each window kept back for more urgent calls (streamed edits and cosmetics pass some). */
  reserve?: number;
}

/** Per-chat and global pacing; see the module comment. */
export interface Budget {
  /** Milliseconds until a call to `chatId` may go out (0: now). */
  delay(chatId: number, now: number, ask?: PaceAsk): number;
  /** Records a call to `chatId` at `now`. */
  take(chatId: number, now: number, kind?: PaceKind): void;
  /** Records a 429 for `chatId` with Telegram's `retry_after` (seconds). */
  penalize(chatId: number, retryAfterSec: number, now: number): void;
  /** The message windows in force for `chatId` now, for logs and tests. */
  windows(chatId: number, now: number): readonly PaceWindow[];
}

interface ChatPace {
  /** Times of the chat's message calls in its windows, oldest first. */
  messages: number[];
  reactions: number[];
  blockedUntil: number;
  tightUntil: number;
}

/** Creates a budget; it holds only timestamps, so one per gateway is enough. */
export function createBudget(options: BudgetOptions = {}): Budget {
  const scale = options.scale ?? 1;
  const group = scaled(GATEWAY_WINDOWS.group, scale);
  const priv = scaled(GATEWAY_WINDOWS.private, scale);
  const reaction = scaled(GATEWAY_WINDOWS.reaction, scale);
  const global = scaled([{ limit: options.globalPerSecond ?? 25, periodMs: 1000 }], scale);
  const penaltyMs = options.penaltyMs ?? 60_000;
  const factor = options.penaltyFactor ?? 2;
  const chats = new Map<number, ChatPace>();
  /** Times of the calls across all chats, oldest first. */
  let recent: number[] = [];

  const pace = (chatId: number): ChatPace => {
    let p = chats.get(chatId);
    if (!p) {
      p = { messages: [], reactions: [], blockedUntil: 0, tightUntil: 0 };
      chats.set(chatId, p);
    }
    return p;
  };
  const windowsOf = (chatId: number, kind: PaceKind, now: number): readonly PaceWindow[] => {
    const base = kind === 'reaction' ? reaction : chatId < 0 ? group : priv;
    return (chats.get(chatId)?.tightUntil ?? 0) > now ? tightened(base, factor) : base;
  };

  return {
    windows: (chatId, now) => windowsOf(chatId, 'message', now),
    delay(chatId, now, ask = {}) {
      const kind = ask.kind ?? 'message';
      const p = pace(chatId);
      const own = kind === 'reaction' ? p.reactions : p.messages;
      return Math.max(
        0,
        windowDelay(recent, global, now),
        windowDelay(own, windowsOf(chatId, kind, now), now, ask.reserve ?? 0),
        p.blockedUntil - now,
      );
    },
    take(chatId, now, kind = 'message') {
      const p = pace(chatId);
      if (kind === 'reaction') p.reactions = [...pruneTimes(p.reactions, reaction, now), now];
      else p.messages = [...pruneTimes(p.messages, chatId < 0 ? group : priv, now), now];
      recent = [...pruneTimes(recent, global, now), now];
      if (chats.size > 10_000) {
        // Forget rested chats: an empty record is what a new entry starts with anyway.
        for (const [id, c] of chats)
          if (c.tightUntil < now && c.blockedUntil < now && pruneTimes(c.messages, group, now).length === 0)
            chats.delete(id);
      }
    },
    penalize(chatId, retryAfterSec, now) {
      const p = pace(chatId);
      p.blockedUntil = Math.max(p.blockedUntil, now + retryAfterSec * 1000);
      p.tightUntil = now + penaltyMs;
    },
  };
}

/** Drafts a rested chat may send at once ("Thinking…" and the first words). */
export const DRAFT_BURST = 2;

/**
 * Drafts per private chat, across replies (a new message's "Thinking…" can follow the previous reply's
 * last draft at once): a bucket of `burst` refilled one per `everyMs` (`token-bucket.ts`), asked as the
 * send budget is.
 */
export type DraftPacer = Pick<Budget, 'delay' | 'take'>;

/** Creates the per-chat draft bucket; pure arithmetic over the times it is given. */
export function createDraftPacer(everyMs = DRAFT_EVERY_MS, burst = DRAFT_BURST): DraftPacer {
  const limits: BucketLimits = { perMinute: 60_000 / everyMs, burst };
  const chats = new Map<number, BucketState>();
  const bucket = (chatId: number, now: number): BucketState => chats.get(chatId) ?? fullBucket(limits, now);
  return {
    delay(chatId, now) {
      const level = bucketLevel(bucket(chatId, now), limits, now);
      chats.set(chatId, level);
      const check = bucketCheck(level, limits, now);
      return check.ok ? 0 : check.retryAfterMs;
    },
    take(chatId, now) {
      // A draft re-sent after a refusal goes whatever the level: the next one waits that much longer.
      chats.set(chatId, bucketSpend(bucket(chatId, now), limits, now));
      if (chats.size > 10_000)
        for (const [id, c] of chats) if (bucketLevel(c, limits, now).tokens >= burst) chats.delete(id);
    },
  };
}
