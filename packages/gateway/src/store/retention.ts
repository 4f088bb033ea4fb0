/**
 * What the store forgets, in one place: every table's rule for a row that is finished and old. The
 * rules never touch a row something still waits on — an inbound message in the inbox (`queued`, `sent`),
 * a turn not yet rendered, a file send not yet sent or failed, an unhandled update, and the newest
 * update (its id is where polling resumes) — so forgetting is safe at any moment, not only at boot.
 * When, and how old, is the caller's (`../retention.ts`).
 */
import type { Db } from './database.js';

/** How many rows of each kind one pass forgot. */
export interface Forgotten {
  updates: number;
  inbound: number;
  turns: number;
  commandRoutes: number;
  fileSends: number;
  /** Schedule and webhook runs (`automation_runs`) whose message has left the inbox. */
  automationRuns: number;
}

/** The retention queries over `db`. */
export interface RetentionTable {
  /** Forgets finished rows that finished (or, for routes and inbound, were created) before `before` (ms). */
  forgetFinishedBefore(before: number): Forgotten;
  /**
   * Paths of files still waited on, never deleted: attachments of inbound messages still in the inbox,
   * and files of file sends not yet finished.
   */
  filesInUse(): Set<string>;
}

/** The retention queries over `db`. */
export function createRetentionTable(db: Db): RetentionTable {
  const q = {
    maxUpdate: db.prepare<[], { m: number | null }>('SELECT MAX(update_id) AS m FROM updates'),
    updates: db.prepare('DELETE FROM updates WHERE handled = 1 AND update_id < ? AND received_at < ?'),
    inbound: db.prepare("DELETE FROM inbound WHERE state NOT IN ('queued','sent') AND created_at < ?"),
    turns: db.prepare("DELETE FROM turns WHERE state = 'rendered' AND ended_at < ?"),
    commandRoutes: db.prepare('DELETE FROM command_routes WHERE created_at < ?'),
    fileSends: db.prepare("DELETE FROM file_sends WHERE state IN ('sent', 'failed') AND ended_at < ?"),
    // A run's key is what keeps it from running twice: kept while its message is in the inbox or its
    // note not yet sent, and for the retention's days after (longer than GitHub's 3-day redelivery; a
    // schedule's due times are guarded by its decided-up-to time as well).
    automationRuns: db.prepare(
      `DELETE FROM automation_runs WHERE created_at < ? AND note_state != 'due'
         AND inbound_id NOT IN (SELECT inbound_id FROM inbound WHERE state IN ('queued','sent'))`,
    ),
    unfinishedFrames: db.prepare<[], { frame: string }>(
      "SELECT frame FROM inbound WHERE state IN ('queued','sent')",
    ),
    unfinishedFileSends: db.prepare<[], { frame: string }>(
      "SELECT frame FROM file_sends WHERE state NOT IN ('sent', 'failed')",
    ),
  };
  return {
    forgetFinishedBefore: db.transaction(
      (before: number): Forgotten => ({
        updates: q.updates.run(q.maxUpdate.get()?.m ?? 0, before).changes,
        inbound: q.inbound.run(before).changes,
        turns: q.turns.run(before).changes,
        commandRoutes: q.commandRoutes.run(before).changes,
        fileSends: q.fileSends.run(before).changes,
        automationRuns: q.automationRuns.run(before).changes,
      }),
    ),
    filesInUse() {
      const paths = new Set<string>();
      for (const row of q.unfinishedFrames.all()) {
        const frame = JSON.parse(row.frame) as { attachments?: { path?: unknown }[] };
        for (const a of frame.attachments ?? []) if (typeof a.path === 'string') paths.add(a.path);
      }
      for (const row of q.unfinishedFileSends.all()) {
        const frame = JSON.parse(row.frame) as { files?: { path?: unknown }[] };
        for (const f of frame.files ?? []) if (typeof f.path === 'string') paths.add(f.path);
      }
      return paths;
    },
  };
}
