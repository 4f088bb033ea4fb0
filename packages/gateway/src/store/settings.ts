/**
 * The `meta` key–value table (settings, the channel's counters: see `channel-outbox.ts`) and the
 * `refused` set of users already told they are not on the allowlist.
 */
import type { Db } from './database.js';

/** A few durable settings. */
export interface Settings {
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
  /** True the first time a user is refused; false afterwards. */
  recordRefusal(userId: number): boolean;
}

/** The settings over `db`. */
export function createSettings(db: Db): Settings {
  const q = {
    get: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    set: db.prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    ),
    refuse: db.prepare('INSERT OR IGNORE INTO refused (user_id) VALUES (?)'),
  };
  return {
    getMeta: (key) => q.get.get(key)?.value,
    setMeta: (key, value) => {
      q.set.run(key, value);
    },
    recordRefusal: (userId) => q.refuse.run(userId).changes > 0,
  };
}
