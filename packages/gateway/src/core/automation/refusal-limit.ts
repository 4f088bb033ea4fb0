/**
 * The webhook receiver's per-address refusal limit: an address whose requests were refused for a bad
 * signature (or timestamp) `strikes` times within `windowMs` is refused at once, before its body is read,
 * for `blockMs` — so one sender cannot try signatures (or make the receiver hash bodies) as fast as it
 * can send them. A pure machine on the caller's `now` (`io/automation/webhook-server.ts` is its shell).
 *
 * Bounded: at most `maxAddresses` are remembered; past that the oldest are forgotten first (a forgotten
 * address starts again from no strikes), so a flood from many addresses costs memory only up to the cap.
 * An address is forgotten once its strikes are out of the window and it is not blocked.
 */

/** How many refusals, how soon, and for how long. */
export interface RefusalLimits {
  /** Refusals within the window that block the address. */
  strikes: number;
  windowMs: number;
  /** How long a blocked address is refused. */
  blockMs: number;
  /** Addresses remembered at most. */
  maxAddresses: number;
}

/** The default: 10 bad signatures within a minute block the address for 10 minutes. */
export const DEFAULT_REFUSAL_LIMITS: RefusalLimits = {
  strikes: 10,
  windowMs: 60_000,
  blockMs: 10 * 60_000,
  maxAddresses: 10_000,
};

/** The limit's memory of the addresses that were refused lately. */
export interface RefusalLimit {
  /** Whether a request from `address` may be looked at now, or in how many seconds it may. */
  check(address: string, now: number): { ok: true } | { ok: false; retryAfterSec: number };
  /** A request from `address` was refused (a 401); returns true when that blocks the address. */
  refused(address: string, now: number): boolean;
  /** Addresses remembered (for tests and the cap). */
  size(): number;
}

interface Entry {
  /** Times of the refusals within the window, oldest first. */
  strikes: number[];
  blockedUntil: number | undefined;
}

/** Creates the limit; see the module comment. */
export function createRefusalLimit(limits: RefusalLimits = DEFAULT_REFUSAL_LIMITS): RefusalLimit {
  const entries = new Map<string, Entry>();
  const stale = (entry: Entry, now: number): boolean =>
    (entry.blockedUntil === undefined || entry.blockedUntil <= now) &&
    (entry.strikes.at(-1) ?? Number.NEGATIVE_INFINITY) <= now - limits.windowMs;
  return {
    check(address, now) {
      const entry = entries.get(address);
      if (entry?.blockedUntil === undefined || entry.blockedUntil <= now) return { ok: true };
      return { ok: false, retryAfterSec: Math.max(1, Math.ceil((entry.blockedUntil - now) / 1000)) };
    },
    refused(address, now) {
      const entry = entries.get(address) ?? { strikes: [], blockedUntil: undefined };
      // Re-inserted: the map's order is the order of last refusal, oldest first.
      entries.delete(address);
      entry.strikes = [...entry.strikes.filter((at) => at > now - limits.windowMs), now];
      const blocks = entry.strikes.length >= limits.strikes;
      if (blocks) {
        entry.blockedUntil = now + limits.blockMs;
        entry.strikes = [];
      }
      entries.set(address, entry);
      for (const [key, old] of entries) {
        if (entries.size <= limits.maxAddresses && !stale(old, now)) break;
        if (entries.size > limits.maxAddresses || stale(old, now)) entries.delete(key);
      }
      return blocks;
    },
    size: () => entries.size,
  };
}
