/**
 * The store's SQLite connection: where the file lives, the durability settings every other store module
 * relies on, and the schema checked (or written) before any table module prepares a statement.
 *
 * Ownership: the table modules next to this one are the only code that issues SQL, each for its own
 * tables (a few read another's, and say so). Every call is synchronous (better-sqlite3), so a write is
 * durable against the process dying once the call returns.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Route } from '@switchyard/protocol';
import Database from 'better-sqlite3';
import { applySchema } from './schema.js';

/** An open store connection, at this build's schema. */
export type Db = Database.Database;

/**
 * Opens (creating if needed) the file at `path` (or `:memory:`) and writes the schema into a new file;
 * a file of another schema version is refused (`schema.ts`).
 *
 * The database holds users' messages: its directory is 0700 and the file 0600 whatever the umask, and
 * SQLite gives the `-wal` and `-shm` files it creates the main file's mode. Files left wider by an
 * earlier version are narrowed.
 */
export function openDatabase(path: string): Db {
  if (path !== ':memory:') ownOnly(path);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // NORMAL in WAL mode: a commit is written to the WAL file (the OS page cache) before the call
  // returns, but not fsynced; checkpoints are. So every returned transaction survives the process
  // dying at any instant (`kill -9`, a crash, OOM) — the guarantee intake and the channel rely on.
  // Only an OS crash or power loss can lose the last transactions (the database stays consistent):
  // then an update may be confirmed to Telegram but not kept. FULL (one fsync per commit) closed that
  // too but tripled the update → placeholder latency; see the README's benchmark.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  try {
    applySchema(db, path);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Creates the directory (0700) and an empty file (0600) unless present, then narrows both to the owner. */
function ownOnly(path: string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
}

/**
 * A route as every table stores it: `chat_id` and a nullable `thread_id` (no topic); the tables of turns
 * also keep a nullable `lane` (a webhook's or schedule's own conversation in that chat).
 */
export function storedRoute(chatId: number, threadId: number | null, lane: string | null = null): Route {
  const place = threadId === null ? { chatId } : { chatId, threadId };
  return lane === null ? place : { ...place, lane };
}
