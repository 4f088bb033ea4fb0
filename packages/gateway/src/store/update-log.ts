/**
 * The `updates` table: every Telegram update from the moment `getUpdates` returns it until its handler
 * finished, so a crash between the two replays it (intake.ts) and a duplicate is recognized by its id.
 *
 * Invariant: the newest row is never pruned — it carries the `getUpdates` offset across restarts.
 */
import type { Db } from './database.js';

/** The durable record of Telegram updates. */
export interface UpdateLog {
  /** The offset that confirms everything already recorded. */
  nextUpdateOffset(): number;
  /** Records a batch (payload `undefined` for updates whose content must not be kept); returns the new ones. */
  recordUpdates(updates: { updateId: number; payload: unknown }[]): number[];
  /** Recorded but unhandled updates, in order: replayed at boot. */
  unhandledUpdates(): { updateId: number; payload: unknown }[];
  isHandled(updateId: number): boolean;
  markHandled(updateId: number): void;
}

/** The update log over `db` (handled updates are forgotten by `retention.ts`). */
export function createUpdateLog(db: Db, now: () => number): UpdateLog {
  const q = {
    maxUpdate: db.prepare<[], { m: number | null }>('SELECT MAX(update_id) AS m FROM updates'),
    insertUpdate: db.prepare(
      'INSERT OR IGNORE INTO updates (update_id, payload, handled, received_at) VALUES (?, ?, 0, ?)',
    ),
    unhandled: db.prepare<[], { update_id: number; payload: string | null }>(
      'SELECT update_id, payload FROM updates WHERE handled = 0 ORDER BY update_id',
    ),
    handled: db.prepare<[number], { handled: number }>('SELECT handled FROM updates WHERE update_id = ?'),
    markHandled: db.prepare('UPDATE updates SET handled = 1, payload = NULL WHERE update_id = ?'),
  };

  return {
    nextUpdateOffset: () => (q.maxUpdate.get()?.m ?? -1) + 1,
    recordUpdates: db.transaction((updates: { updateId: number; payload: unknown }[]): number[] => {
      const fresh: number[] = [];
      const at = now();
      for (const u of updates) {
        const payload = u.payload === undefined ? null : JSON.stringify(u.payload);
        if (q.insertUpdate.run(u.updateId, payload, at).changes > 0) fresh.push(u.updateId);
      }
      return fresh;
    }),
    unhandledUpdates: () =>
      q.unhandled.all().map((r) => ({
        updateId: r.update_id,
        payload: r.payload === null ? undefined : JSON.parse(r.payload),
      })),
    isHandled: (updateId) => q.handled.get(updateId)?.handled === 1,
    markHandled: (updateId) => {
      q.markHandled.run(updateId);
    },
  };
}
