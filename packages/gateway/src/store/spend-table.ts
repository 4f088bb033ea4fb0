/**
 * The `spend` and `budget_notices` tables: what each turn cost and whose message opened it, and which
 * budget notices were given. They serve the daily budgets and today's cost (`io/spend/spend-ledger.ts`),
 * and the opening message's id the replies to the agent's files (`file-table.ts` reads it).
 *
 * A turn's row is written when it starts (its conversation and sender) and gets its cost when it ends;
 * both writes are idempotent (a frame resent after a reconnect changes nothing), and a turn whose start
 * was never seen is still counted, with no sender. Rows are forgotten a few days after they ended
 * ({@link SpendTable.forgetSpendBefore}), so the table holds days, not history.
 */
import type { Route } from '@switchyard/protocol';
import type { Db } from './database.js';

/** Today's spending of one conversation. */
export interface ConversationSpend {
  route: Route;
  usd: number;
}

/** The spending and the notices. */
export interface SpendTable {
  /**
   * A turn started in `route`, opened by `userId`'s message (undefined: nobody typed it) whose Telegram
   * id is `openerMessageId` (undefined: the turn has no opening message in the chat).
   */
  spendStarted(turnId: string, route: Route, userId: number | undefined, openerMessageId?: number): void;
  /** A turn ended having cost `usd`; counted once, whatever repeats. */
  spendEnded(turnId: string, route: Route, usd: number, at: number): void;
  /** What turns ended at or after `since` cost: all of them, or those `userId` opened. */
  spentSince(since: number, userId?: number): number;
  /** What the last `limit` turns that ended cost, newest first (transcriptions and commands left out). */
  recentSpend(limit: number): number[];
  /** The same, by conversation, largest first. */
  spentByConversationSince(since: number): ConversationSpend[];
  /** Records a notice as given; false when it was given before. */
  noteBudgetNotice(key: string, at: number): boolean;
  /** Forgets spending that ended, and notices given, before `before`. */
  forgetSpendBefore(before: number): number;
}

/** The spend table over `db`. */
export function createSpendTable(db: Db): SpendTable {
  const q = {
    start: db.prepare(
      'INSERT OR IGNORE INTO spend (turn_id, chat_id, thread_id, user_id, opener_message_id) VALUES (?, ?, ?, ?, ?)',
    ),
    end: db.prepare('UPDATE spend SET usd = ?, ended_at = ? WHERE turn_id = ? AND usd IS NULL'),
    all: db.prepare<[number], { usd: number | null }>(
      'SELECT SUM(usd) AS usd FROM spend WHERE usd IS NOT NULL AND ended_at >= ?',
    ),
    user: db.prepare<[number, number], { usd: number | null }>(
      'SELECT SUM(usd) AS usd FROM spend WHERE usd IS NOT NULL AND ended_at >= ? AND user_id = ?',
    ),
    byConversation: db.prepare<[number], { chat_id: number; thread_id: number | null; usd: number }>(
      `SELECT chat_id, thread_id, SUM(usd) AS usd FROM spend WHERE usd IS NOT NULL AND ended_at >= ?
       GROUP BY chat_id, thread_id ORDER BY usd DESC`,
    ),
    recent: db.prepare<[number], { usd: number }>(
      `SELECT usd FROM spend WHERE usd IS NOT NULL AND turn_id NOT LIKE 'voice:%' AND turn_id NOT LIKE 'cmd:%'
       ORDER BY ended_at DESC LIMIT ?`,
    ),
    notice: db.prepare('INSERT OR IGNORE INTO budget_notices (key, created_at) VALUES (?, ?)'),
    forgetSpend: db.prepare('DELETE FROM spend WHERE ended_at < ?'),
    forgetNotices: db.prepare('DELETE FROM budget_notices WHERE created_at < ?'),
  };
  return {
    spendStarted: (turnId, route, userId, openerMessageId) => {
      q.start.run(turnId, route.chatId, route.threadId ?? null, userId ?? null, openerMessageId ?? null);
    },
    spendEnded: db.transaction((turnId: string, route: Route, usd: number, at: number) => {
      q.start.run(turnId, route.chatId, route.threadId ?? null, null, null);
      q.end.run(usd, at, turnId);
    }),
    spentSince: (since, userId) =>
      (userId === undefined ? q.all.get(since) : q.user.get(since, userId))?.usd ?? 0,
    recentSpend: (limit) => q.recent.all(limit).map((r) => r.usd),
    spentByConversationSince: (since) =>
      q.byConversation.all(since).map((r) => ({
        route: r.thread_id === null ? { chatId: r.chat_id } : { chatId: r.chat_id, threadId: r.thread_id },
        usd: r.usd,
      })),
    noteBudgetNotice: (key, at) => q.notice.run(key, at).changes === 1,
    forgetSpendBefore: db.transaction(
      (before: number) => q.forgetSpend.run(before).changes + q.forgetNotices.run(before).changes,
    ),
  };
}
