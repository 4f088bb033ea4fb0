/**
 * The `automation_runs` table: every run of a schedule or webhook (`io/automation/inject.ts`) by its key,
 * written in the transaction that puts the run's inbound row in the inbox, and kept: a key seen before
 * is never delivered again. Also where the run's note (the chat's "why the agent talks") is on its way
 * to the chat.
 *
 * Reads and writes the `inbound` row of a run too ({@link AutomationRuns.noteSent}): the note's message
 * becomes the message the run's answer replies to, as a user's message is for theirs.
 */
import type { Route } from '@switchyard/protocol';
import { type Db, storedRoute } from './database.js';

/** Where a run's note is: not yet in the chat, sent as a message, or given up on. */
export type NoteState = 'due' | 'sent' | 'failed';

/** One run as the table keeps it. */
export interface AutomationRunRow {
  key: string;
  inboundId: string;
  route: Route;
  origin: { kind: 'schedule' | 'webhook'; name: string };
  note: string;
  noteState: NoteState;
  noteMessageId: number | undefined;
  createdAt: number;
  /** A webhook delivery's SHA-256 of what was signed: unique per hook, like the key. */
  contentSha256?: string | undefined;
}

/** The runs. */
export interface AutomationRuns {
  /** Records a run; false (and nothing written) when its key, or its hook's content hash, is known already. */
  recordRun(row: Omit<AutomationRunRow, 'noteState' | 'noteMessageId' | 'createdAt'>): boolean;
  getRun(key: string): AutomationRunRow | undefined;
  /**
   * The run's note is message `messageId` in its chat: recorded, and made the message the run's inbound
   * row (and its stored frame) replies to, in one transaction.
   */
  noteSent(key: string, messageId: number): void;
  /** The run's note could not be sent; the run goes on without it. */
  noteFailed(key: string): void;
  /** Runs whose note is still due (a crash came between the run's commit and its note), oldest first. */
  dueNotes(): AutomationRunRow[];
}

/** The runs over `db`. */
export function createAutomationRuns(db: Db, now: () => number): AutomationRuns {
  const q = {
    insert: db.prepare(
      `INSERT OR IGNORE INTO automation_runs
         (key, inbound_id, chat_id, thread_id, origin_kind, origin_name, note, note_state, created_at,
          content_sha256)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'due', ?, ?)`,
    ),
    get: db.prepare<[string], RunSql>('SELECT * FROM automation_runs WHERE key = ?'),
    sent: db.prepare("UPDATE automation_runs SET note_state = 'sent', note_message_id = ? WHERE key = ?"),
    failed: db.prepare(
      "UPDATE automation_runs SET note_state = 'failed' WHERE key = ? AND note_state = 'due'",
    ),
    opener: db.prepare(
      `UPDATE inbound SET telegram_message_id = ?, frame = json_set(frame, '$.telegramMessageId', ?)
       WHERE inbound_id = ?`,
    ),
    due: db.prepare<[], RunSql>(
      "SELECT * FROM automation_runs WHERE note_state = 'due' ORDER BY created_at, rowid",
    ),
  };
  return {
    recordRun: (row) =>
      q.insert.run(
        row.key,
        row.inboundId,
        row.route.chatId,
        row.route.threadId ?? null,
        row.origin.kind,
        row.origin.name,
        row.note,
        now(),
        row.contentSha256 ?? null,
      ).changes === 1,
    getRun: (key) => toRun(q.get.get(key)),
    noteSent: db.transaction((key: string, messageId: number) => {
      const run = q.get.get(key);
      if (!run) return;
      q.sent.run(messageId, key);
      q.opener.run(messageId, messageId, run.inbound_id);
    }),
    noteFailed: (key) => {
      q.failed.run(key);
    },
    dueNotes: () => q.due.all().map((r) => toRun(r) as AutomationRunRow),
  };
}

interface RunSql {
  key: string;
  inbound_id: string;
  chat_id: number;
  thread_id: number | null;
  origin_kind: 'schedule' | 'webhook';
  origin_name: string;
  note: string;
  note_state: NoteState;
  note_message_id: number | null;
  created_at: number;
}

function toRun(r: RunSql | undefined): AutomationRunRow | undefined {
  if (!r) return undefined;
  return {
    key: r.key,
    inboundId: r.inbound_id,
    route: storedRoute(r.chat_id, r.thread_id),
    origin: { kind: r.origin_kind, name: r.origin_name },
    note: r.note,
    noteState: r.note_state,
    noteMessageId: r.note_message_id ?? undefined,
    createdAt: r.created_at,
  };
}
