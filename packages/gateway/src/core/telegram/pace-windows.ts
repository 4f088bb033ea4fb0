/**
 * The one pacing model of every Bot API call the gateway aims at a chat: sliding windows, "at most
 * `limit` calls in any `periodMs`", the shape in which Telegram publishes its limits. A window lets a
 * short burst through at once (four answers to a group go out together) and still holds the long-run
 * rate, where a token bucket sized for the rate would space every call out.
 *
 * Pure arithmetic over the caller's `now` and the times of the calls it recorded; the budget
 * (`send-pacing.ts`) keeps those times per chat and asks here how long a call must wait.
 *
 * Contract: {@link windowDelay} is 0 when one more call at `now` keeps every window at or under its
 * limit less `reserve` (the slots a less urgent call leaves to more urgent ones, never below one), else
 * the milliseconds until it does. Times are recorded oldest first; {@link pruneTimes} drops the ones no
 * window can see any more, so a chat's record is bounded by its largest limit.
 */

/** "At most `limit` calls in any `periodMs`." */
export interface PaceWindow {
  readonly limit: number;
  readonly periodMs: number;
}

/**
 * Telegram's published limits (Bot FAQ: "My bot is hitting limits, how do I avoid this?") and the
 * gateway's windows under them, with the margins stated. Sends and edits both count as messages.
 */
export const TELEGRAM_LIMITS = {
  /** A group: 20 messages in any minute. */
  group: { limit: 20, periodMs: 60_000 },
  /** A private chat: about one message a second, short bursts allowed (the stand-in: 3 at once, 1/s). */
  private: { limit: 3, periodMs: 3000 },
  /** Across all chats: about 30 a second. */
  global: { limit: 30, periodMs: 1000 },
  /**
   * Reactions (`setMessageReaction`) per chat. Telegram publishes no number for them and they are not
   * messages (nothing new appears in the chat, nobody is notified), so they do not spend a chat's
   * message slots. This is the limit the sandbox's stand-in enforces, and so the one this code is
   * measured against: 20 in any 10 s per chat; they do count across chats.
   */
  reaction: { limit: 20, periodMs: 10_000 },
} as const satisfies Record<string, PaceWindow>;

/**
 * The gateway's own windows. Margins: every period 10% longer (our send time is not Telegram's arrival
 * time); a group two calls under its limit and a chat's reactions four (a call retried after an
 * unknown outcome may have counted); a private chat keeps the stand-in's burst of three; 25 a second
 * across chats (30 less a sixth, for the calls outside any chat's lane: chat actions, drafts).
 */
export const GATEWAY_WINDOWS = {
  group: [{ limit: 18, periodMs: 66_000 }],
  private: [{ limit: 3, periodMs: 3300 }],
  global: [{ limit: 25, periodMs: 1000 }],
  reaction: [{ limit: 16, periodMs: 11_000 }],
} as const satisfies Record<string, readonly PaceWindow[]>;

/** Which windows a call spends: a chat's message windows, or its reaction window. */
export type PaceKind = 'message' | 'reaction';

/**
 * Milliseconds until one more call fits every window in `windows` at `now` (0: now), given the calls
 * recorded in `times` (oldest first) and `reserve` slots kept back in each window.
 */
export function windowDelay(
  times: readonly number[],
  windows: readonly PaceWindow[],
  now: number,
  reserve = 0,
): number {
  let wait = 0;
  for (const w of windows) {
    const allowed = Math.max(1, w.limit - reserve);
    // Calls this window still sees at `now`: those after `now - periodMs`.
    let first = times.length;
    while (first > 0 && (times[first - 1] as number) > now - w.periodMs) first--;
    const seen = times.length - first;
    if (seen < allowed) continue;
    // The call that must leave the window before one more fits: the (seen - allowed)-th oldest seen.
    const leaving = times[first + (seen - allowed)] as number;
    wait = Math.max(wait, leaving + w.periodMs - now);
  }
  return Math.max(0, wait);
}

/** `times` without the calls older than the longest window (a new array; the input is not changed). */
export function pruneTimes(times: readonly number[], windows: readonly PaceWindow[], now: number): number[] {
  const longest = Math.max(0, ...windows.map((w) => w.periodMs));
  return times.filter((t) => t > now - longest);
}

/** The windows with their limits cut by `factor` (at least one call each): a chat tightened after a 429. */
export function tightened(windows: readonly PaceWindow[], factor: number): PaceWindow[] {
  return windows.map((w) => ({ limit: Math.max(1, Math.floor(w.limit / factor)), periodMs: w.periodMs }));
}

/** The windows with every period multiplied by `scale` (tests run the clock ten times faster). */
export function scaled(windows: readonly PaceWindow[], scale: number): PaceWindow[] {
  return windows.map((w) => ({ limit: w.limit, periodMs: w.periodMs * scale }));
}
