/**
 * The gateway's SQLite file as operator tools see it: read-only counts for `switchyard status`, an
 * integrity check for `doctor`, and an online backup for `backup`. Nothing here writes to the file, and
 * nothing migrates it: a tool must never change the schema under a running gateway.
 *
 * Ownership: like every module under `store/`, this one issues SQL only against tables this package
 * defines (it reads all of them, which is why it lives here and not in the cli).
 */
import { systemClock } from '@switchyard/protocol';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from './schema.js';

/** What `switchyard status` shows of one gateway's durable state. */
export interface GatewayInspection {
  /** `PRAGMA user_version`; `schemaCurrent` is false when it is not this build's. */
  schemaVersion: number;
  schemaCurrent: boolean;
  /** Inbound messages not yet acknowledged by the bridge (`queued` + `sent`), per conversation. */
  queued: Array<{ chatId: number; threadId: number | null; count: number }>;
  /** Turns started and not yet ended. */
  runningTurns: Array<{ turnId: string; chatId: number; threadId: number | null; startedAt: number }>;
  openPrompts: number;
  pinnedCards: number;
  /** The most recent turn that ended with an error (its plain words for the user). */
  lastError: { turnId: string; endedAt: number; error: string } | undefined;
  /** The highest Telegram update id stored (handled or not). */
  lastUpdateId: number | undefined;
  /**
   * What turns that ended since `since` cost, per conversation (USD, as the bridge reported each turn's
   * cost); empty when none did or the file predates the column.
   */
  costSince: Array<{ chatId: number; threadId: number | null; usd: number; turns: number }>;
}

/**
 * Opens `path` read-only (it must exist) and reads the counts; the file is closed before returning.
 * `since` (epoch ms, default the start of the local day) bounds {@link GatewayInspection.costSince}.
 */
export function inspectGatewayStore(
  path: string,
  since = startOfLocalDay(systemClock.now()),
): GatewayInspection {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const schemaVersion = db.pragma('user_version', { simple: true }) as number;
    if (schemaVersion === 0) throw new Error(`${path} is not a gateway store (no schema)`);
    const queued = db
      .prepare<[], { chatId: number; threadId: number | null; count: number }>(
        `SELECT chat_id AS chatId, thread_id AS threadId, COUNT(*) AS count FROM inbound
         WHERE state IN ('queued','sent') GROUP BY chat_id, thread_id ORDER BY chat_id, thread_id`,
      )
      .all();
    const runningTurns = db
      .prepare<[], GatewayInspection['runningTurns'][number]>(
        `SELECT turn_id AS turnId, chat_id AS chatId, thread_id AS threadId, started_at AS startedAt
         FROM turns WHERE state = 'running' ORDER BY started_at`,
      )
      .all();
    const count = (sql: string) => (db.prepare<[], { n: number }>(sql).get()?.n ?? 0) as number;
    const lastError = db
      .prepare<[], { turnId: string; endedAt: number; error: string }>(
        `SELECT turn_id AS turnId, ended_at AS endedAt, error FROM turns
         WHERE error IS NOT NULL AND ended_at IS NOT NULL ORDER BY ended_at DESC LIMIT 1`,
      )
      .get();
    const lastUpdate = db
      .prepare<[], { id: number | null }>('SELECT MAX(update_id) AS id FROM updates')
      .get();
    const hasCost = db
      .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('turns')")
      .all()
      .some((c) => c.name === 'cost_usd');
    return {
      schemaVersion,
      schemaCurrent: schemaVersion === SCHEMA_VERSION,
      queued,
      runningTurns,
      openPrompts: count("SELECT COUNT(*) AS n FROM prompts WHERE state = 'open'"),
      pinnedCards: count('SELECT COUNT(*) AS n FROM pins'),
      lastError,
      lastUpdateId: lastUpdate?.id ?? undefined,
      costSince: hasCost
        ? db
            .prepare<[number], GatewayInspection['costSince'][number]>(
              `SELECT chat_id AS chatId, thread_id AS threadId, SUM(cost_usd) AS usd, COUNT(*) AS turns
               FROM turns WHERE cost_usd IS NOT NULL AND ended_at >= ?
               GROUP BY chat_id, thread_id ORDER BY chat_id, thread_id`,
            )
            .all(since)
        : [],
    };
  } finally {
    db.close();
  }
}

/** What the turns that ended since each bound cost (USD), from the `spend` table, for `status --cost`. */
export interface GatewaySpend {
  /** USD and turns per bound, in the order the bounds were given. */
  since: Array<{ since: number; usd: number; turns: number }>;
}

/**
 * Opens `path` read-only and sums the `spend` table (what budgets count) since each of `bounds` (epoch
 * ms). The table keeps 35 days (`SPEND_KEPT_MS`): a bound further back counts only what is kept.
 */
export function readGatewaySpend(path: string, bounds: readonly number[]): GatewaySpend {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const sum = db.prepare<[number], { usd: number | null; turns: number }>(
      'SELECT SUM(usd) AS usd, COUNT(*) AS turns FROM spend WHERE usd IS NOT NULL AND ended_at >= ?',
    );
    return {
      since: bounds.map((since) => {
        const row = sum.get(since);
        return { since, usd: row?.usd ?? 0, turns: row?.turns ?? 0 };
      }),
    };
  } finally {
    db.close();
  }
}

/** Midnight, local time, of the day `now` (epoch ms) falls in. */
export function startOfLocalDay(now: number): number {
  const day = new Date(now);
  day.setHours(0, 0, 0, 0);
  return day.getTime();
}

/**
 * `PRAGMA quick_check` on `path`, read-only: `ok`, or what SQLite reports as damaged. Throws when the
 * file cannot be opened at all.
 */
export function checkGatewayStore(
  path: string,
): { ok: true; schemaVersion: number } | { ok: false; problem: string } {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const result = db.pragma('quick_check', { simple: true }) as string;
    if (result !== 'ok') return { ok: false, problem: result };
    const schemaVersion = db.pragma('user_version', { simple: true }) as number;
    if (schemaVersion !== SCHEMA_VERSION) {
      return {
        ok: false,
        problem: `schema version ${schemaVersion} is not this build's ${SCHEMA_VERSION} (the gateway refuses it: delete the state directory)`,
      };
    }
    return { ok: true, schemaVersion };
  } finally {
    db.close();
  }
}

/**
 * A consistent copy of the store at `dest` while a gateway may be writing it: SQLite's online backup
 * (`db.backup`), which copies committed pages only, including those still in the WAL. A file copy of a
 * WAL database is not a backup: it may miss the WAL or catch a page mid-write.
 */
export async function backupGatewayStore(path: string, dest: string): Promise<void> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(dest);
  } finally {
    db.close();
  }
}
