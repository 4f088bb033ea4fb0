/**
 * The daily budgets' rule: whether a new turn may start, given what was spent today, and what the
 * person is told when it may not. Pure; the shell (`io/spend/spend-ledger.ts`) sums today's spending in
 * the agent's time zone and gives it here.
 *
 * Rules:
 * - A budget is used up once today's spending reached it (`spent >= limit`); the agent's budget is looked
 *   at first, then the sender's own. A turn nobody typed (a schedule's, a webhook's) has no sender and
 *   answers only to the agent's budget.
 * - Only messages are held back (one that would start a turn, or steer a running one and so extend it);
 *   a running turn is never cut, and what it costs after the budget was reached still counts (so
 *   spending may end a little over the budget).
 * - The person is told once per local day and budget ({@link noticeKey}); every refused message is
 *   still marked as not read, with the short {@link SpendVerdict} reason.
 */
import { formatUsd } from '../commands/command-texts.js';

/** The budgets, in USD a local day; an absent one does not limit. */
export interface SpendLimits {
  dailyUsd?: number | undefined;
  perUserDailyUsd?: number | undefined;
}

/** The budgets with the day they are counted in. */
export interface SpendOptions extends SpendLimits {
  /** The agent's IANA time zone; default UTC. */
  timeZone?: string | undefined;
}

/** Today's spending the rule looks at. */
export interface SpentToday {
  agentUsd: number;
  /** The sender's own; undefined for a turn nobody typed. */
  userUsd: number | undefined;
}

/** May the turn start, and if not, which budget is used up. */
export type SpendVerdict =
  | { admit: true }
  | { admit: false; scope: 'agent' | 'user'; spentUsd: number; limitUsd: number; reason: string };

/** Decides whether a new turn may start (see the module comment). */
export function spendVerdict(limits: SpendLimits, spent: SpentToday): SpendVerdict {
  if (limits.dailyUsd !== undefined && spent.agentUsd >= limits.dailyUsd) {
    return {
      admit: false,
      scope: 'agent',
      spentUsd: spent.agentUsd,
      limitUsd: limits.dailyUsd,
      reason: `the agent’s daily budget of ${formatUsd(limits.dailyUsd)} is used up`,
    };
  }
  if (
    limits.perUserDailyUsd !== undefined &&
    spent.userUsd !== undefined &&
    spent.userUsd >= limits.perUserDailyUsd
  ) {
    return {
      admit: false,
      scope: 'user',
      spentUsd: spent.userUsd,
      limitUsd: limits.perUserDailyUsd,
      reason: `your daily budget of ${formatUsd(limits.perUserDailyUsd)} is used up`,
    };
  }
  return { admit: true };
}

/**
 * The key of a notice given once a day: the local `day` (YYYY-MM-DD), the budget, and who is told — the
 * sender, or the chat of a turn nobody typed.
 */
export function noticeKey(
  day: string,
  verdict: SpendVerdict & { admit: false },
  told: { userId: number | undefined; chatId: number },
): string {
  const who = told.userId !== undefined ? `user:${told.userId}` : `chat:${told.chatId}`;
  return `${day}|${verdict.scope}|${who}`;
}

/** What the person is told, once a day, when a budget is used up; `resetsAt` is local time, with its zone. */
export function budgetNotice(verdict: SpendVerdict & { admit: false }, resetsAt: string): string {
  const whose = verdict.scope === 'agent' ? 'The agent’s daily budget' : 'Your daily budget';
  return (
    `${whose} of ${formatUsd(verdict.limitUsd)} is used up: ${formatUsd(verdict.spentUsd)} spent today. ` +
    `New messages are not passed on to Claude until it resets at ${resetsAt}; ` +
    'a turn already running goes on.'
  );
}
