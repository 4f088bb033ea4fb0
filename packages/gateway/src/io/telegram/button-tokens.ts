/**
 * Server-side tokens behind inline buttons: a button's callback data is only `<prefix><random token>`;
 * what it does and the chat it was shown in are kept here, so callback data naming a session or a
 * conversation itself does nothing, and a token is honoured only from the chat whose message carried it
 * (with `within: 'conversation'`, only from that chat's topic too).
 *
 * Tokens live in memory: each leaves after `ttlMs`, or when more than `max` are kept (the oldest first),
 * or with the process; a press on a token that left is told the button expired.
 */
import { randomBytes } from 'node:crypto';
import { conversationKey, type Route } from '@switchyard/protocol';

/** A token table for one kind of button. */
export interface ButtonTokens<T> {
  /** The callback data of a new token for `action` on `target`, pressable in `shownIn`'s chat. */
  issue(action: T, target: Route, shownIn: Route): string;
  /** The press's action and target; `undefined` when unknown, expired or pressed elsewhere. */
  resolve(data: string, from: Route): { action: T; route: Route } | undefined;
  /** Whether `data` is one of this table's (by its prefix). */
  owns(data: string): boolean;
}

/** Creates a token table; `now` reads the gateway's clock (ms since the epoch). */
export function createButtonTokens<T>(
  prefix: string,
  now: () => number,
  limits: { ttlMs: number; max: number; within?: 'chat' | 'conversation' },
): ButtonTokens<T> {
  const tokens = new Map<string, { action: T; target: Route; shownIn: string; at: number }>();
  const place = (route: Route): string =>
    limits.within === 'conversation' ? conversationKey(route) : String(route.chatId);
  const sweep = (at: number): void => {
    // Insertion order is age order: the expired, then the surplus, leave from the front.
    for (const [token, entry] of tokens) {
      if (at - entry.at <= limits.ttlMs && tokens.size <= limits.max) break;
      tokens.delete(token);
    }
  };
  return {
    issue(action, target, shownIn) {
      const at = now();
      const token = randomBytes(12).toString('base64url');
      tokens.set(token, { action, target: { ...target }, shownIn: place(shownIn), at });
      sweep(at);
      return `${prefix}${token}`;
    },
    resolve(data, from) {
      sweep(now());
      if (!data.startsWith(prefix)) return undefined;
      const entry = tokens.get(data.slice(prefix.length));
      if (!entry || entry.shownIn !== place(from)) return undefined;
      return { action: entry.action, route: { ...entry.target } };
    },
    owns: (data) => data.startsWith(prefix),
  };
}
