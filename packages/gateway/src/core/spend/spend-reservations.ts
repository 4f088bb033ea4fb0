/**
 * The budgets' reservations: which conversations have work open that will cost money — a message the
 * gate admitted that no turn has taken yet, a running turn, a `/compact` — so a new turn is weighed
 * against what is spent *and* what is under way (`spend-gate.ts` has the rule). Pure bookkeeping over
 * the ids of the bridge's frames; the shell (`io/spend/spend-ledger.ts`) feeds it and multiplies by the
 * estimate of a turn's cost.
 *
 * Invariants:
 * - One reservation per conversation (by `conversationKey`), whatever it has open: a conversation runs
 *   one turn at a time, and a message written into a running turn (a steer) extends that turn, so the
 *   reservations count the turns that can run at once.
 * - A reservation leaves when the last thing it holds has ended: its turns (`turn_ended`), its
 *   commands' results, and its admitted messages (taken into a turn, or marked unread). One whose
 *   messages never began (a frame lost with the gateway) leaves {@link STALE_MS} after it last changed,
 *   so a lost frame cannot hold the budget for the day.
 * - Nothing here is durable: after a gateway restart the shell reserves again the turns the store
 *   shows running since the local day began (without their opener: the agent's budget alone).
 */

/** A reservation that has seen nothing for this long, and holds no running turn, is dropped. */
export const STALE_MS = 30 * 60_000;

interface Reservation {
  /** Whose message opened the work (undefined: nobody typed it). */
  userId: number | undefined;
  /** Admitted messages (inbound ids) no turn has taken yet. */
  messages: Set<string>;
  /** Running turns and commands (turn ids; `cmd:<commandId>`). */
  work: Set<string>;
  at: number;
}

/** The reservations; see the module comment. */
export interface Reservations {
  /** How many conversations other than `except` hold one (of those `userId` opened, when given). */
  others(except: string, userId?: number): number;
  /** The gate admitted message `inboundId` of conversation `key` from `userId`. */
  admitted(key: string, inboundId: string, userId: number | undefined, now: number): void;
  /** Work `workId` (a turn, a command) began in `key`, taking `inboundIds` (the turn's opening messages). */
  began(
    key: string,
    workId: string,
    inboundIds: readonly string[],
    userId: number | undefined,
    now: number,
  ): void;
  /** Messages a running turn took (a steer), or that will never be read (unread): no longer waiting. */
  settled(inboundIds: readonly string[], now: number): boolean;
  /** Work `workId` ended; true when that released its conversation's reservation. */
  ended(workId: string): boolean;
  /** Whether `workId` is open (a command the budget admitted, say). */
  holds(workId: string): boolean;
  /** Drops reservations that went stale ({@link STALE_MS}); true when any left. */
  sweep(now: number): boolean;
  /** How many conversations hold one, for logs and tests. */
  size(): number;
}

/** Creates an empty set of reservations. */
export function createReservations(): Reservations {
  const byKey = new Map<string, Reservation>();
  const of = (key: string, userId: number | undefined, now: number): Reservation => {
    let r = byKey.get(key);
    if (!r) {
      r = { userId, messages: new Set(), work: new Set(), at: now };
      byKey.set(key, r);
    }
    r.at = now;
    return r;
  };
  const release = (key: string, r: Reservation): boolean => {
    if (r.messages.size > 0 || r.work.size > 0) return false;
    byKey.delete(key);
    return true;
  };
  return {
    others(except, userId) {
      let n = 0;
      for (const [key, r] of byKey) if (key !== except && (userId === undefined || r.userId === userId)) n++;
      return n;
    },
    admitted(key, inboundId, userId, now) {
      of(key, userId, now).messages.add(inboundId);
    },
    began(key, workId, inboundIds, userId, now) {
      const r = of(key, userId, now);
      r.work.add(workId);
      for (const id of inboundIds) r.messages.delete(id);
    },
    settled(inboundIds, now) {
      let released = false;
      for (const [key, r] of byKey) {
        let changed = false;
        for (const id of inboundIds) changed = r.messages.delete(id) || changed;
        if (!changed) continue;
        r.at = now;
        released = release(key, r) || released;
      }
      return released;
    },
    ended(workId) {
      for (const [key, r] of byKey) if (r.work.delete(workId)) return release(key, r);
      return false;
    },
    holds(workId) {
      for (const r of byKey.values()) if (r.work.has(workId)) return true;
      return false;
    },
    sweep(now) {
      let dropped = false;
      for (const [key, r] of byKey) {
        if (r.work.size > 0 || now - r.at < STALE_MS) continue;
        byKey.delete(key);
        dropped = true;
      }
      return dropped;
    },
    size: () => byKey.size,
  };
}
