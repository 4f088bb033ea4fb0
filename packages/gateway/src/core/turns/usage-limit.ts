/**
 * The usage limit as the chat sees it: one notice when a conversation's Claude login hits its limit,
 * naming the time the work goes on in the agent's time zone, and the state `/status` shows until then.
 * The bridge holds the turn and its messages and resumes it (`agent-bridge/src/io/session/limit-wait.ts`); the
 * gateway only tells people, and keeps schedules from piling up runs meanwhile (`io/automation/schedules.ts`).
 *
 * Invariant: one notice per conversation and wait — a `limited` for a conversation already waiting
 * (a bridge that said it again, a later reset time) says nothing more.
 */
import { conversationKey, type FrameOf, type Route } from '@switchyard/protocol/common';

/** "05:37 (Europe/Berlin)": a reset time as the chat reads it, in `timeZone` (default UTC). */
export function resetTimeText(resetsAt: number, timeZone = 'UTC'): string {
  const time = new Intl.DateTimeFormat('en-GB', {
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone,
  }).format(resetsAt);
  return `${time} (${timeZone})`;
}

/** The notice a conversation gets once when the usage limit is reached. */
export function usageLimitNotice(resetsAt: number, timeZone?: string): string {
  return `⏳ usage limit reached — continuing at ${resetTimeText(resetsAt, timeZone)}. Your messages are kept and answered then.`;
}

/** `/status`'s line for a conversation waiting out the limit. */
export function usageLimitStatus(resetsAt: number, timeZone?: string): string {
  return `Usage limit: reached, continuing at ${resetTimeText(resetsAt, timeZone)}`;
}

/** Which conversations wait out a usage limit, and until when. */
export interface UsageLimits {
  /** A `usage_limit` frame: the notice to send (only for a wait that begins), or none. */
  frame(frame: FrameOf<'usage_limit'>): { route: Route; text: string } | undefined;
  /** When the conversation's limit resets, if it waits for one. */
  until(route: Route): number | undefined;
}

/** The tracker, in memory (the bridge's snapshot is the durable side of the wait). */
export function createUsageLimits(timeZone?: string): UsageLimits {
  const waiting = new Map<string, number>();
  return {
    frame(frame) {
      const key = conversationKey(frame.route);
      if (frame.state === 'resumed') {
        waiting.delete(key);
        return undefined;
      }
      const known = waiting.has(key);
      waiting.set(key, Math.max(frame.resetsAt, waiting.get(key) ?? 0));
      return known ? undefined : { route: frame.route, text: usageLimitNotice(frame.resetsAt, timeZone) };
    },
    until: (route) => waiting.get(conversationKey(route)),
  };
}
