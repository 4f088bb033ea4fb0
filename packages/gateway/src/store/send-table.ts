/**
 * The send journal's tables (the design is in `../send-journal.ts`): `sends`, each `sendMessage` whose
 * outcome is not known yet, and `chat_marks`, the newest bot message id known per chat — the floor above
 * which a lost send's message must be.
 *
 * Reads `inbound` and `prompts` (never writes them) for a chat's floor before its first journaled send.
 */
import type { Db } from './database.js';

/**
 * A `sendMessage` whose outcome is not known yet: recorded before the call, removed in the transaction
 * that records the new message's id (see `io/telegram/send-journal.ts`). One left at boot means the process
 * died while the call was in flight, and the message may exist without anyone knowing its id.
 */
export interface SendRow {
  sendId: number;
  chatId: number;
  /** The newest bot message id known in the chat when the call left: the message, if any, is above it. */
  floor: number;
  /** Who adopts the message if it is found (JSON of `io/telegram/send-journal.ts`'s `SendOwner`), or none. */
  owner: unknown;
  /** The text and options it was sent with, so it can be recognized without being changed. */
  text: string;
  other: Record<string, unknown>;
}

/** Sends in flight (see {@link SendRow}). */
export interface SendTable {
  /** Records a send about to leave; its floor is the chat's newest known bot message id. */
  beginSend(send: { chatId: number; owner: unknown; text: string; other: Record<string, unknown> }): number;
  /**
   * The send's message is `messageId` (or it made none: `undefined`): drops the row, raises the chat's mark.
   */
  endSend(sendId: number, chatId: number, messageId: number | undefined): void;
  /** Sends left in flight by a previous process, oldest first. */
  pendingSends(): SendRow[];
  /**
   * A bot message sent without the journal (a file upload) is known: raises the chat's mark, so the floor
   * of the next journaled send stays above it.
   */
  raiseMark(chatId: number, messageId: number): void;
}

/** The send table over `db`. */
export function createSendTable(db: Db, now: () => number): SendTable {
  const q = {
    mark: db.prepare<[number], { m: number }>(
      'SELECT last_bot_message_id AS m FROM chat_marks WHERE chat_id = ?',
    ),
    // Before the first journaled send in a chat (a chat new to the gateway), the
    // newest message the gateway knows there stands in for the mark.
    knownMax: db.prepare<[number, number], { m: number | null }>(
      `SELECT MAX(m) AS m FROM (
         SELECT MAX(telegram_message_id, COALESCE(placeholder_id, 0)) AS m FROM inbound WHERE chat_id = ?
         UNION ALL SELECT COALESCE(message_id, 0) FROM prompts WHERE chat_id = ?)`,
    ),
    raiseMark: db.prepare(
      `INSERT INTO chat_marks (chat_id, last_bot_message_id) VALUES (?, ?)
       ON CONFLICT(chat_id) DO UPDATE SET last_bot_message_id = MAX(last_bot_message_id, excluded.last_bot_message_id)`,
    ),
    beginSend: db.prepare(
      'INSERT INTO sends (chat_id, floor, owner, text, other, started_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    endSend: db.prepare('DELETE FROM sends WHERE send_id = ?'),
    sends: db.prepare<[], SendSql>('SELECT * FROM sends ORDER BY send_id'),
  };

  return {
    beginSend: (send) => {
      const floor = q.mark.get(send.chatId)?.m ?? q.knownMax.get(send.chatId, send.chatId)?.m ?? 0;
      const result = q.beginSend.run(
        send.chatId,
        floor,
        send.owner === undefined ? null : JSON.stringify(send.owner),
        send.text,
        JSON.stringify(send.other),
        now(),
      );
      return Number(result.lastInsertRowid);
    },
    endSend: db.transaction((sendId: number, chatId: number, messageId: number | undefined) => {
      q.endSend.run(sendId);
      if (messageId !== undefined) q.raiseMark.run(chatId, messageId);
    }),
    raiseMark: (chatId, messageId) => {
      q.raiseMark.run(chatId, messageId);
    },
    pendingSends: () =>
      q.sends.all().map((r) => ({
        sendId: r.send_id,
        chatId: r.chat_id,
        floor: r.floor,
        owner: r.owner === null ? undefined : (JSON.parse(r.owner) as unknown),
        text: r.text,
        other: JSON.parse(r.other) as Record<string, unknown>,
      })),
  };
}

interface SendSql {
  send_id: number;
  chat_id: number;
  floor: number;
  owner: string | null;
  text: string;
  other: string;
}
