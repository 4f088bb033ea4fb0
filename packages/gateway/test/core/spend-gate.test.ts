import { describe, expect, it } from 'vitest';
import {
  budgetNotice,
  noticeKey,
  type SpendLimits,
  type SpentToday,
  spendVerdict,
} from '../../src/core/spend/spend-gate.js';

const BOTH: SpendLimits = { dailyUsd: 20, perUserDailyUsd: 5 };

describe('the daily budgets’ rule', () => {
  it.each<[string, SpendLimits, SpentToday, unknown]>([
    ['under both', BOTH, { agentUsd: 19.99, userUsd: 4.99 }, { admit: true }],
    ['no budgets', {}, { agentUsd: 1e6, userUsd: 1e6 }, { admit: true }],
    [
      'the agent’s reached exactly',
      BOTH,
      { agentUsd: 20, userUsd: 0 },
      {
        admit: false,
        scope: 'agent',
        spentUsd: 20,
        limitUsd: 20,
        reason: 'the agent’s daily budget of $20.00 is used up',
      },
    ],
    [
      'the user’s reached',
      BOTH,
      { agentUsd: 6, userUsd: 5.2 },
      {
        admit: false,
        scope: 'user',
        spentUsd: 5.2,
        limitUsd: 5,
        reason: 'your daily budget of $5.00 is used up',
      },
    ],
    [
      'both reached: the agent’s is said',
      BOTH,
      { agentUsd: 21, userUsd: 9 },
      {
        admit: false,
        scope: 'agent',
        spentUsd: 21,
        limitUsd: 20,
        reason: 'the agent’s daily budget of $20.00 is used up',
      },
    ],
    [
      'a run (no sender) answers only to the agent’s',
      BOTH,
      { agentUsd: 6, userUsd: undefined },
      { admit: true },
    ],
    ['only a per-user budget', { perUserDailyUsd: 1 }, { agentUsd: 100, userUsd: 0.5 }, { admit: true }],
    [
      'turns running elsewhere would reach the agent’s: held until one ends',
      BOTH,
      { agentUsd: 19, userUsd: 0, reservedUsd: 1 },
      {
        admit: 'hold',
        scope: 'agent',
        spentUsd: 19,
        limitUsd: 20,
        reason: 'the turns running now may use up the agent’s daily budget of $20.00',
      },
    ],
    [
      'reserved, still under the agent’s',
      BOTH,
      { agentUsd: 18, userUsd: 0, reservedUsd: 1.99 },
      { admit: true },
    ],
    [
      'the sender’s own running turns would reach theirs',
      BOTH,
      { agentUsd: 1, userUsd: 4, reservedUsd: 1, userReservedUsd: 1 },
      {
        admit: 'hold',
        scope: 'user',
        spentUsd: 4,
        limitUsd: 5,
        reason: 'your turns running now may use up your daily budget of $5.00',
      },
    ],
    [
      'spent is refused before reserved is held',
      BOTH,
      { agentUsd: 20, userUsd: 0, reservedUsd: 5 },
      expect.objectContaining({ admit: false, scope: 'agent' }),
    ],
  ])('%s', (_what, limits, spent, expected) => {
    expect(spendVerdict(limits, spent)).toEqual(expected);
  });

  it('a notice is keyed by day, budget and who is told; it says what was spent and when it resets', () => {
    const verdict = spendVerdict(BOTH, { agentUsd: 3, userUsd: 5.5 });
    if (verdict.admit) throw new Error('expected a refusal');
    expect(noticeKey('2026-12-01', verdict, { userId: 7, chatId: 7 })).toBe('2026-12-01|user|user:7');
    expect(noticeKey('2026-12-01', verdict, { userId: undefined, chatId: -100 })).toBe(
      '2026-12-01|user|chat:-100',
    );
    expect(budgetNotice(verdict, '2026-12-02 00:00 (Europe/Berlin)')).toBe(
      'Your daily budget of $5.00 is used up: $5.50 spent today. New messages are not passed on to Claude ' +
        'until it resets at 2026-12-02 00:00 (Europe/Berlin); a turn already running goes on.',
    );
  });
});
