/**
 * The store's schema history. The file's version is `PRAGMA user_version`; each entry of
 * {@link MIGRATIONS} brings it one step forward, in one transaction with the version bump.
 *
 * Invariant: append only. A shipped entry is never edited or reordered — a deployed gateway's file has
 * already run it, and `test/store.test.ts` checks that a fresh file still matches a version-2 one.
 */
import type Database from 'better-sqlite3';

/** Ordered schema steps; index + 1 is the version each one brings the file to. Append only. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE updates (
     update_id INTEGER PRIMARY KEY,
     payload TEXT,
     handled INTEGER NOT NULL DEFAULT 0,
     received_at INTEGER NOT NULL);
   CREATE TABLE inbound (
     inbound_id TEXT PRIMARY KEY,
     chat_id INTEGER NOT NULL,
     thread_id INTEGER,
     telegram_message_id INTEGER NOT NULL,
     frame TEXT NOT NULL,
     seq INTEGER,
     state TEXT NOT NULL,
     placeholder_id INTEGER,
     placeholder_kind TEXT,
     created_at INTEGER NOT NULL);
   CREATE INDEX inbound_state ON inbound (state, created_at);
   CREATE TABLE channel_out (seq INTEGER PRIMARY KEY, frame TEXT NOT NULL);
   CREATE TABLE turns (
     turn_id TEXT PRIMARY KEY,
     chat_id INTEGER NOT NULL,
     thread_id INTEGER,
     state TEXT NOT NULL,
     request TEXT NOT NULL DEFAULT '',
     blocks TEXT NOT NULL DEFAULT '[]',
     message_ids TEXT NOT NULL DEFAULT '[]',
     card_message_id INTEGER,
     outcome TEXT,
     error TEXT,
     started_at INTEGER NOT NULL,
     ended_at INTEGER);
   CREATE TABLE pins (
     chat_id INTEGER NOT NULL,
     message_id INTEGER NOT NULL,
     turn_id TEXT NOT NULL,
     pinned_at INTEGER NOT NULL,
     PRIMARY KEY (chat_id, message_id));
   CREATE TABLE prompts (
     token TEXT PRIMARY KEY,
     request_id TEXT NOT NULL UNIQUE,
     kind TEXT NOT NULL,
     chat_id INTEGER NOT NULL,
     thread_id INTEGER,
     message_id INTEGER,
     payload TEXT NOT NULL,
     selection TEXT NOT NULL DEFAULT '{}',
     state TEXT NOT NULL,
     created_at INTEGER NOT NULL);
   CREATE TABLE refused (user_id INTEGER PRIMARY KEY);`,
  // 2: what a gateway restart must not forget — a question's partial answers, the chat each pending
  // command answers to, and the Telegram sends whose result (the new message's id) was not yet known.
  `ALTER TABLE prompts ADD COLUMN answers TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE command_routes (
     command_id TEXT PRIMARY KEY,
     chat_id INTEGER NOT NULL,
     thread_id INTEGER,
     created_at INTEGER NOT NULL);
   CREATE TABLE sends (
     send_id INTEGER PRIMARY KEY AUTOINCREMENT,
     chat_id INTEGER NOT NULL,
     floor INTEGER NOT NULL,
     owner TEXT,
     text TEXT NOT NULL,
     other TEXT NOT NULL,
     started_at INTEGER NOT NULL);
   CREATE TABLE chat_marks (chat_id INTEGER PRIMARY KEY, last_bot_message_id INTEGER NOT NULL);`,
  // 3: files the agent sends, from the bridge's `file_send` until Telegram has them (store/file-table.ts).
  `CREATE TABLE file_sends (
     file_id TEXT PRIMARY KEY,
     chat_id INTEGER NOT NULL,
     frame TEXT NOT NULL,
     state TEXT NOT NULL,
     message_ids TEXT,
     error TEXT,
     created_at INTEGER NOT NULL,
     ended_at INTEGER);
   CREATE INDEX file_sends_state ON file_sends (state, created_at);`,
  // 4: the text a placeholder must be edited to and Telegram has not confirmed yet ("✓ taken", "✗ not
  // read", …). Kept so that an edit lost to a crash or a Telegram outage is made again (store/inbox.ts).
  `ALTER TABLE inbound ADD COLUMN placeholder_due TEXT;
   CREATE INDEX inbound_placeholder_due ON inbound (created_at) WHERE placeholder_due IS NOT NULL;`,
  // 5: what each turn cost (the bridge's `turn_ended.costUsd`), for `switchyard status`'s cost today.
  `ALTER TABLE turns ADD COLUMN cost_usd REAL;`,
];

/** Runs the migrations `db` has not seen yet, each in its own transaction with its version bump. */
export function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
