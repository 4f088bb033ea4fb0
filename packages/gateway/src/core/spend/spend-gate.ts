/**
 * The daily budgets' rule: whether a new turn may start, given what was spent today, and what the
 * person is told when it may not. Pure; the shell (`io/spend/spend-ledger.ts`) sums today's spending in
 * the agent's time zone and gives it here.
 *
 * Rules:
 * - A budget is used up once today's spending reached it (`spent >= limit`); the agent's budget is looked
 *   at first, then the sender's own. A turn nobody typed (a schedule's, a webhook's) has no sender and
 *   answers only to the agent's budget (or its schedule's creator's, when the shell knows who that is).
 * - A running turn holds a reservation of one estimate of a turn's cost until it ends, and so does a
 *   message admitted but not yet begun (the shell, `io/spend/spend-ledger.ts`, keeps one per conversation
 *   with work open). A new turn is admitted only while what was spent plus the other conversations'
 *   reservations is under the budget; otherwise it is held ({@link SpendVerdict} `admit: 'hold'`) until a
 *   running turn ends, or refused once the spending alone reached the budget. So however many turns
 *   start at once, spending ends at most one estimate over the budget (when no turn costs more than
 *   the estimate): ten topics written at once under a $1 budget no longer run ten turns.
 * - Only messages are held back (one that would start a turn, or steer a running one and so extend it),
 *   with `/compact`, a typed answer and a voice note's transcription, which spend too; a running turn is
 *   never cut, and what it costs after the budget was reached still counts.
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
  /**
   * What a turn is reserved at while it runs (USD); default the mean cost of the last turns, or $0.25
   * before any ended. The budget can be passed by at most this much, as long as no turn costs more.
   */
  turnEstimateUsd?: number | undefined;
  /** What a minute of voice transcription costs (USD); default $0.006, OpenAI's price. */
  transcriptionUsdPerMinute?: number | undefined;
}

/** Today's spending the rule looks at. */
export interface SpentToday {
  agentUsd: number;
  /** The sender's own; undefined for a turn nobody typed. */
  userUsd: number | undefined;
  /** What the other conversations' running turns (and admitted messages) hold reserved; default 0. */
  reservedUsd?: number;
  /** The part of `reservedUsd` the sender's own turns hold; default 0. */
  userReservedUsd?: number;
}

/** A budget that refuses or holds a turn, and how far it is used. */
interface Limited {
  scope: 'agent' | 'user';
  spentUsd: number;
  limitUsd: number;
  reason: string;
}

/**
 * May the turn start; if not, which budget is used up (`false`: refused for the day) or would be if the
 * running turns cost what they are expected to (`'hold'`: it waits until one of them ends).
 */
export type SpendVerdict = { admit: true } | ({ admit: false } & Limited) | ({ admit: 'hold' } & Limited);

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
  const reserved = spent.reservedUsd ?? 0;
  if (limits.dailyUsd !== undefined && spent.agentUsd + reserved >= limits.dailyUsd) {
    return {
      admit: 'hold',
      scope: 'agent',
      spentUsd: spent.agentUsd,
      limitUsd: limits.dailyUsd,
      reason: `the turns running now may use up the agent’s daily budget of ${formatUsd(limits.dailyUsd)}`,
    };
  }
  const userReserved = spent.userReservedUsd ?? 0;
  if (
    limits.perUserDailyUsd !== undefined &&
    spent.userUsd !== undefined &&
    spent.userUsd + userReserved >= limits.perUserDailyUsd
  ) {
    return {
      admit: 'hold',
      scope: 'user',
      spentUsd: spent.userUsd,
      limitUsd: limits.perUserDailyUsd,
      reason: `your turns running now may use up your daily budget of ${formatUsd(limits.perUserDailyUsd)}`,
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
