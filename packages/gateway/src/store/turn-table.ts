/**
 * The `turns` table: each agent turn mapped onto Telegram — its chat, the text blocks it has produced so
 * far (authoritative, from the consolidated `text` frames), the reply's messages and its progress card —
 * so a restarted gateway re-attaches a running turn and finishes rendering an ended one (turns.ts).
 *
 * States move `running → ended → rendered`; only `rendered` rows are forgotten, a day after they ended.
 */
import type { Route } from '@switchyard/protocol';
import { type Db, storedRoute } from './database.js';

/** A turn as the gateway maps it onto Telegram messages. */
export interface TurnRow {
  turnId: string;
  route: Route;
  state: 'running' | 'ended' | 'rendered';
  request: string;
  /** Authoritative text blocks in order, keyed by block id. */
  blocks: { id: string; text: string }[];
  /** The reply's Telegram messages in order (the first is the placeholder it grew from). */
  messageIds: number[];
  /** The progress card while it is open: set once it is sent, cleared once it closed (final render done). */
  cardMessageId: number | undefined;
  outcome: string | undefined;
  error: string | undefined;
  startedAt: number;
}

/** The turns. */
export interface TurnTable {
  upsertTurn(turn: { turnId: string; route: Route; request: string; startedAt: number }): TurnRow;
  getTurn(turnId: string): TurnRow | undefined;
  setTurnBlock(turnId: string, blockId: string, text: string): void;
  setTurnMessages(turnId: string, messageIds: readonly number[]): void;
  setTurnCard(turnId: string, messageId: number | undefined): void;
  /** Ends a running turn; `costUsd` is what it cost, when the bridge said. */
  endTurn(turnId: string, outcome: string, error: string | undefined, costUsd?: number): void;
  markTurnRendered(turnId: string): void;
  /** Turns that still need work after a restart: running, or ended but not rendered. */
  unfinishedTurns(): TurnRow[];
  /** Turns whose card is open (sent, not closed), whatever their state, oldest first. */
  openCards(): TurnRow[];
}

/** The turn table over `db` (rendered turns are forgotten by `retention.ts`). */
export function createTurnTable(db: Db, now: () => number): TurnTable {
  const q = {
    insertTurn: db.prepare(
      `INSERT OR IGNORE INTO turns (turn_id, chat_id, thread_id, lane, state, request, started_at)
       VALUES (?, ?, ?, ?, 'running', ?, ?)`,
    ),
    turn: db.prepare<[string], TurnSql>('SELECT * FROM turns WHERE turn_id = ?'),
    setBlocks: db.prepare('UPDATE turns SET blocks = ? WHERE turn_id = ?'),
    setMessages: db.prepare('UPDATE turns SET message_ids = ? WHERE turn_id = ?'),
    setCard: db.prepare('UPDATE turns SET card_message_id = ? WHERE turn_id = ?'),
    endTurn: db.prepare(
      "UPDATE turns SET state = 'ended', outcome = ?, error = ?, cost_usd = ?, ended_at = ? WHERE turn_id = ? AND state = 'running'",
    ),
    renderTurn: db.prepare("UPDATE turns SET state = 'rendered' WHERE turn_id = ?"),
    unfinished: db.prepare<[], TurnSql>("SELECT * FROM turns WHERE state != 'rendered' ORDER BY started_at"),
    openCards: db.prepare<[], TurnSql>(
      'SELECT * FROM turns WHERE card_message_id IS NOT NULL ORDER BY started_at',
    ),
  };

  return {
    upsertTurn: (t) => {
      q.insertTurn.run(
        t.turnId,
        t.route.chatId,
        t.route.threadId ?? null,
        t.route.lane ?? null,
        t.request,
        t.startedAt,
      );
      return toTurn(q.turn.get(t.turnId)) as TurnRow;
    },
    getTurn: (turnId) => toTurn(q.turn.get(turnId)),
    setTurnBlock: db.transaction((turnId: string, blockId: string, text: string) => {
      const row = q.turn.get(turnId);
      if (!row) return;
      const blocks = JSON.parse(row.blocks) as { id: string; text: string }[];
      const existing = blocks.find((b) => b.id === blockId);
      if (existing) existing.text = text;
      else blocks.push({ id: blockId, text });
      q.setBlocks.run(JSON.stringify(blocks), turnId);
    }),
    setTurnMessages: (turnId, ids) => {
      q.setMessages.run(JSON.stringify(ids), turnId);
    },
    setTurnCard: (turnId, messageId) => {
      q.setCard.run(messageId ?? null, turnId);
    },
    endTurn: (turnId, outcome, error, costUsd) => {
      q.endTurn.run(outcome, error ?? null, costUsd ?? null, now(), turnId);
    },
    markTurnRendered: (turnId) => {
      q.renderTurn.run(turnId);
    },
    unfinishedTurns: () => q.unfinished.all().map((r) => toTurn(r) as TurnRow),
    openCards: () => q.openCards.all().map((r) => toTurn(r) as TurnRow),
  };
}

interface TurnSql {
  turn_id: string;
  chat_id: number;
  thread_id: number | null;
  lane: string | null;
  state: TurnRow['state'];
  request: string;
  blocks: string;
  message_ids: string;
  card_message_id: number | null;
  outcome: string | null;
  error: string | null;
  started_at: number;
}

function toTurn(r: TurnSql | undefined): TurnRow | undefined {
  if (!r) return undefined;
  return {
    turnId: r.turn_id,
    route: storedRoute(r.chat_id, r.thread_id, r.lane),
    state: r.state,
    request: r.request,
    blocks: JSON.parse(r.blocks) as TurnRow['blocks'],
    messageIds: JSON.parse(r.message_ids) as number[],
    cardMessageId: r.card_message_id ?? undefined,
    outcome: r.outcome ?? undefined,
    error: r.error ?? undefined,
    startedAt: r.started_at,
  };
}
