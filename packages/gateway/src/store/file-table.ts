/**
 * The `file_sends` table: each file (or album) the agent sends, from the bridge's `file_send` until
 * Telegram has it (`io/reply/files.ts`). The row is written before the frame is acknowledged, so a gateway
 * restart finds every upload still owed; `state` says how far it got:
 * `queued` (not yet handed to Telegram) → `uploading` (the call left) → `sent` | `failed`.
 *
 * Finished rows keep their outcome for a day, so a `file_send` the bridge sends again is answered with
 * the same `file_sent` instead of a second upload.
 */
import type { FrameOf } from '@switchyard/protocol';
import type { Db } from './database.js';

/** One file send as the gateway tracks it. */
export interface FileSendRow {
  fileId: string;
  frame: FrameOf<'file_send'>;
  state: 'queued' | 'uploading' | 'sent' | 'failed';
  messageIds: number[];
  error: string | undefined;
}

/** The file sends. */
export interface FileTable {
  /** Records a new send as `queued`; returns the existing row instead when `fileId` is known. */
  addFileSend(frame: FrameOf<'file_send'>): FileSendRow | undefined;
  /** The upload call is about to leave: a restart from here on cannot tell whether Telegram has it. */
  markFileUploading(fileId: string): void;
  /** Telegram took it (`messageIds`) or refused it (`error`). */
  endFileSend(fileId: string, outcome: { messageIds: readonly number[] } | { error: string }): void;
  /** Sends not finished, oldest first: `queued` ones, and `uploading` ones a crash left. */
  unfinishedFileSends(): FileSendRow[];
  /**
   * The user message a turn answers, to reply to: the message that opened it, recorded when it started
   * (the `spend` table's row, whatever the reply looks like: a rich private reply has no placeholder).
   * Undefined for turns the CLI started by itself, or when forgotten.
   */
  turnOpeningMessage(turnId: string): number | undefined;
}

/** The file table over `db` (finished sends are forgotten by `retention.ts`). */
export function createFileTable(db: Db, now: () => number): FileTable {
  const q = {
    insert: db.prepare(
      `INSERT OR IGNORE INTO file_sends (file_id, chat_id, frame, state, created_at) VALUES (?, ?, ?, 'queued', ?)`,
    ),
    get: db.prepare<[string], FileSql>('SELECT * FROM file_sends WHERE file_id = ?'),
    uploading: db.prepare("UPDATE file_sends SET state = 'uploading' WHERE file_id = ? AND state = 'queued'"),
    end: db.prepare(
      'UPDATE file_sends SET state = ?, message_ids = ?, error = ?, ended_at = ? WHERE file_id = ?',
    ),
    unfinished: db.prepare<[], FileSql>(
      "SELECT * FROM file_sends WHERE state IN ('queued', 'uploading') ORDER BY created_at",
    ),
    opening: db.prepare<[string], { id: number }>(
      'SELECT opener_message_id AS id FROM spend WHERE turn_id = ? AND opener_message_id IS NOT NULL',
    ),
  };
  return {
    addFileSend: db.transaction((frame: FrameOf<'file_send'>) => {
      const known = q.get.get(frame.fileId);
      if (known) return toRow(known);
      const { seq: _seq, ...stored } = frame;
      q.insert.run(frame.fileId, frame.route.chatId, JSON.stringify(stored), now());
      return undefined;
    }),
    markFileUploading: (fileId) => {
      q.uploading.run(fileId);
    },
    endFileSend: (fileId, outcome) => {
      const sent = 'messageIds' in outcome;
      q.end.run(
        sent ? 'sent' : 'failed',
        JSON.stringify(sent ? outcome.messageIds : []),
        sent ? null : outcome.error,
        now(),
        fileId,
      );
    },
    unfinishedFileSends: () => q.unfinished.all().map(toRow),
    turnOpeningMessage: (turnId) => q.opening.get(turnId)?.id,
  };
}

interface FileSql {
  file_id: string;
  chat_id: number;
  frame: string;
  state: FileSendRow['state'];
  message_ids: string | null;
  error: string | null;
  created_at: number;
  ended_at: number | null;
}

function toRow(r: FileSql): FileSendRow {
  return {
    fileId: r.file_id,
    frame: JSON.parse(r.frame) as FrameOf<'file_send'>,
    state: r.state,
    messageIds: r.message_ids === null ? [] : (JSON.parse(r.message_ids) as number[]),
    error: r.error ?? undefined,
  };
}
