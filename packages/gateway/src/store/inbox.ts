/**
 * The `inbound` table: each Telegram message the user sent, from the moment it is accepted until the
 * bridge has it. `queued` rows are not yet in the channel's outbox, `sent` ones are but not acknowledged;
 * together they are the inbox. The later states record what the CLI did with the message.
 *
 * Invariant: a row and its `user_message` frame move together — the row becomes `sent` in the
 * transaction that appends the frame and `acked` in the one that acknowledges it ({@link InboxDelivery},
 * called only by the channel outbox), so a crash cannot leave the two disagreeing.
 */
import type { AppFrame, Route } from '@switchyard/protocol';
import { type Db, storedRoute } from './database.js';
import type { UpdateLog } from './update-log.js';

/** Where an inbound message is on its way to the CLI. `queued`/`sent` are the inbox. */
export type InboundState = 'queued' | 'sent' | 'acked' | 'taken' | 'unread';

/** One inbound Telegram message as the gateway keeps it. */
export interface InboundRow {
  inboundId: string;
  route: Route;
  telegramMessageId: number;
  frame: AppFrame & { type: 'user_message' };
  seq: number | undefined;
  state: InboundState;
  placeholderId: number | undefined;
  /** What the placeholder says or is to say: a reply waiting (`reply`), a steer (`steer`), queued, taken… */
  placeholderKind: string | undefined;
  /**
   * The text the placeholder is to be edited to, until Telegram confirms the edit; `undefined` when it
   * shows what it should, or when the turn's reply owns its text (kind `reply`).
   */
  placeholderDue: string | undefined;
}

/** The inbound messages. */
export interface Inbox {
  /** Writes an inbound message and marks its update handled, in one transaction. */
  addInbound(row: { inboundId: string; frame: AppFrame & { type: 'user_message' }; updateId?: number }): void;
  /**
   * The placeholder's message was sent (or adopted after a crash) saying `kind`. A kind set meanwhile by
   * {@link Inbox.placeholderDue} is newer and is kept: the message is then due its edit.
   */
  setPlaceholder(inboundId: string, messageId: number, kind: string): void;
  /**
   * The placeholder is to say `text` (`undefined`: the turn's reply owns its text), whether or not its
   * message id is known yet. Written before the edit is attempted, so a crash cannot lose it.
   */
  placeholderDue(inboundId: string, kind: string, text: string | undefined): void;
  /** Telegram shows `text` on the placeholder (or it can never be edited again): nothing is due. */
  placeholderShown(inboundId: string, text: string): void;
  /** Placeholders with a known message whose edit is still due, oldest first. */
  duePlaceholders(): InboundRow[];
  getInbound(inboundId: string): InboundRow | undefined;
  setInboundState(inboundIds: readonly string[], state: InboundState): void;
  /** Inbox rows not yet handed to the channel (a crash between write and send), oldest first. */
  queuedInbound(): InboundRow[];
  /** Rows the bridge has not acknowledged yet (the inbox). */
  inboxLength(): number;
  /** Telegram message ids of the user's messages in a chat that the inbox still knows. */
  inboundMessageIds(chatId: number): Set<number>;
}

/** The inbox's two transitions that belong to the reliable channel; see the module comment. */
export interface InboxDelivery {
  /** The message's frame was appended to the outbox as `seq`: a `queued` row becomes `sent`. */
  sent(inboundId: string, seq: number): void;
  /** The bridge acknowledged every frame up to `upTo`: their rows become `acked`. */
  acknowledged(upTo: number): void;
}

/**
 * The inbox over `db` (rows out of the inbox are forgotten by `retention.ts`).
 * `updates` is written in `addInbound`'s transaction.
 */
export function createInbox(db: Db, updates: Pick<UpdateLog, 'markHandled'>, now: () => number): Inbox {
  const q = {
    insertInbound: db.prepare(
      `INSERT OR IGNORE INTO inbound (inbound_id, chat_id, thread_id, telegram_message_id, frame, state, created_at)
       VALUES (?, ?, ?, ?, ?, 'queued', ?)`,
    ),
    inbound: db.prepare<[string], InboundSql>('SELECT * FROM inbound WHERE inbound_id = ?'),
    queued: db.prepare<[], InboundSql>(
      "SELECT * FROM inbound WHERE state = 'queued' ORDER BY created_at, rowid",
    ),
    inboxLength: db.prepare<[], { n: number }>(
      "SELECT COUNT(*) AS n FROM inbound WHERE state IN ('queued','sent')",
    ),
    setPlaceholder: db.prepare(
      'UPDATE inbound SET placeholder_id = ?, placeholder_kind = COALESCE(placeholder_kind, ?) WHERE inbound_id = ?',
    ),
    placeholderDue: db.prepare(
      'UPDATE inbound SET placeholder_kind = ?, placeholder_due = ? WHERE inbound_id = ?',
    ),
    placeholderShown: db.prepare(
      'UPDATE inbound SET placeholder_due = NULL WHERE inbound_id = ? AND placeholder_due = ?',
    ),
    due: db.prepare<[], InboundSql>(
      'SELECT * FROM inbound WHERE placeholder_due IS NOT NULL AND placeholder_id IS NOT NULL ORDER BY created_at, rowid',
    ),
    setInboundState: db.prepare('UPDATE inbound SET state = ? WHERE inbound_id = ?'),
    inboundIds: db.prepare<[number], { id: number }>(
      'SELECT telegram_message_id AS id FROM inbound WHERE chat_id = ?',
    ),
  };

  return {
    addInbound: db.transaction(
      (row: { inboundId: string; frame: AppFrame & { type: 'user_message' }; updateId?: number }) => {
        const f = row.frame;
        q.insertInbound.run(
          row.inboundId,
          f.route.chatId,
          f.route.threadId ?? null,
          f.telegramMessageId,
          JSON.stringify(f),
          now(),
        );
        if (row.updateId !== undefined) updates.markHandled(row.updateId);
      },
    ),
    setPlaceholder: (inboundId, messageId, kind) => {
      q.setPlaceholder.run(messageId, kind, inboundId);
    },
    placeholderDue: (inboundId, kind, text) => {
      q.placeholderDue.run(kind, text ?? null, inboundId);
    },
    placeholderShown: (inboundId, text) => {
      q.placeholderShown.run(inboundId, text);
    },
    duePlaceholders: () => q.due.all().map((r) => toInbound(r) as InboundRow),
    getInbound: (inboundId) => toInbound(q.inbound.get(inboundId)),
    setInboundState: db.transaction((ids: readonly string[], state: InboundState) => {
      for (const id of ids) q.setInboundState.run(state, id);
    }),
    queuedInbound: () => q.queued.all().map((r) => toInbound(r) as InboundRow),
    inboxLength: () => q.inboxLength.get()?.n ?? 0,
    inboundMessageIds: (chatId) => new Set(q.inboundIds.all(chatId).map((r) => r.id)),
  };
}

/** The inbox's side of the channel over `db`; the callers run it inside the channel's transactions. */
export function createInboxDelivery(db: Db): InboxDelivery {
  const q = {
    inboundSent: db.prepare(
      "UPDATE inbound SET seq = ?, state = 'sent' WHERE inbound_id = ? AND state = 'queued'",
    ),
    inboundAcked: db.prepare("UPDATE inbound SET state = 'acked' WHERE state = 'sent' AND seq <= ?"),
  };
  return {
    sent: (inboundId, seq) => {
      q.inboundSent.run(seq, inboundId);
    },
    acknowledged: (upTo) => {
      q.inboundAcked.run(upTo);
    },
  };
}

interface InboundSql {
  inbound_id: string;
  chat_id: number;
  thread_id: number | null;
  telegram_message_id: number;
  frame: string;
  seq: number | null;
  state: InboundState;
  placeholder_id: number | null;
  placeholder_kind: string | null;
  placeholder_due: string | null;
}

function toInbound(r: InboundSql | undefined): InboundRow | undefined {
  if (!r) return undefined;
  return {
    inboundId: r.inbound_id,
    // The frame's route has its lane (a webhook's or schedule's conversation); the columns do not.
    route: storedRoute(
      r.chat_id,
      r.thread_id,
      (JSON.parse(r.frame) as InboundRow['frame']).route.lane ?? null,
    ),
    telegramMessageId: r.telegram_message_id,
    frame: JSON.parse(r.frame) as InboundRow['frame'],
    seq: r.seq ?? undefined,
    state: r.state,
    placeholderId: r.placeholder_id ?? undefined,
    placeholderKind: r.placeholder_kind ?? undefined,
    placeholderDue: r.placeholder_due ?? undefined,
  };
}
