/**
 * The spend ledger over a real (in-memory) store on a manual clock: a turn's cost counts against the
 * agent and the user whose message opened it, a new turn over a budget is refused with one notice a
 * day, and the next local day starts from nothing.
 */
import { type FrameOf, ManualClock, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createSpendLedger } from '../../src/io/spend/spend-ledger.js';
import { type GatewayStore, openGatewayStore } from '../../src/store/store.js';

const ADA = 11;
const BOB = 22;
const CHAT = { chatId: -100 };

let store: GatewayStore | undefined;
afterEach(() => store?.close());

function world(spend: Parameters<typeof createSpendLedger>[0]['spend']) {
  // 2026-12-01 20:00 UTC = 21:00 in Berlin.
  const clock = new ManualClock(Date.parse('2026-12-01T20:00:00Z'));
  const s = openGatewayStore(':memory:', clock);
  store = s;
  const ledger = createSpendLedger({ store: s, spend, clock, logger: silentLogger });
  let n = 0;
  const message = (userId: number): FrameOf<'user_message'> => ({
    type: 'user_message',
    inboundId: `in-${++n}`,
    route: CHAT,
    telegramMessageId: n,
    sender: { id: userId, name: `user ${userId}` },
    text: 'hi',
    attachments: [],
    sentAt: clock.now(),
  });
  /** A turn opened by `userId`'s message that cost `usd`. */
  const turn = (userId: number | undefined, usd: number) => {
    const frame = message(userId ?? 0);
    s.addInbound({ inboundId: frame.inboundId, frame });
    const turnId = `t-${n}`;
    ledger.observe({
      type: 'turn_started',
      turnId,
      route: CHAT,
      inboundIds: [frame.inboundId],
      request: 'x',
      startedAt: 0,
    });
    ledger.observe({ type: 'turn_ended', turnId, outcome: 'success', costUsd: usd });
    // A resent turn_ended counts once.
    ledger.observe({ type: 'turn_ended', turnId, outcome: 'success', costUsd: usd });
  };
  return { clock, ledger, message, turn };
}

describe('spend ledger', () => {
  it('refuses the turn after a user’s budget is spent, tells them once, and lets them in the next day', () => {
    const { clock, ledger, message, turn } = world({ perUserDailyUsd: 1, timeZone: 'Europe/Berlin' });
    turn(ADA, 0.6);
    expect(ledger.check(message(ADA))).toEqual({ admit: true });
    turn(ADA, 0.5); // a turn running when the budget was reached is not cut: its cost counts
    const refused = ledger.check(message(ADA));
    expect(refused).toMatchObject({
      admit: false,
      scope: 'user',
      reason: 'your daily budget of $1.00 is used up',
    });
    expect(refused.admit === false && refused.notice).toBe(
      'Your daily budget of $1.00 is used up: $1.10 spent today. New messages are not passed on to Claude ' +
        'until it resets at 2026-12-02 00:00 (Europe/Berlin); a turn already running goes on.',
    );
    // Told once a day: the next refusal carries no notice. Another user is not held back.
    expect(ledger.check(message(ADA))).toMatchObject({ admit: false, notice: undefined });
    expect(ledger.check(message(BOB))).toEqual({ admit: true });
    expect(ledger.today()).toMatchObject({
      day: '2026-12-01',
      agentUsd: 1.1,
      conversations: [{ route: CHAT, usd: 1.1 }],
    });
    // 23:59 in Berlin: still today. Midnight: a new day.
    clock.advance(2 * 3600_000 + 59 * 60_000);
    expect(ledger.check(message(ADA)).admit).toBe(false);
    clock.advance(60_000);
    expect(ledger.check(message(ADA))).toEqual({ admit: true });
    expect(ledger.today()).toMatchObject({ day: '2026-12-02', agentUsd: 0, conversations: [] });
  });

  it('runs nobody typed count against the agent’s budget only, and are refused once it is spent', () => {
    const { ledger, message, turn } = world({ dailyUsd: 2, perUserDailyUsd: 1.5 });
    turn(undefined, 1.5); // a webhook's run: no sender
    expect(ledger.check(message(ADA))).toEqual({ admit: true });
    turn(ADA, 0.6);
    const run = ledger.check(message(0));
    expect(run).toMatchObject({ admit: false, scope: 'agent' });
    expect(run.admit === false && run.notice).toContain(
      'The agent’s daily budget of $2.00 is used up: $2.10 spent today',
    );
    expect(run.admit === false && run.notice).toContain('2026-12-02 00:00 (UTC)');
  });

  it('without budgets everything passes and the cost is still counted', () => {
    const { ledger, message, turn } = world(undefined);
    turn(ADA, 100);
    expect(ledger.check(message(ADA))).toEqual({ admit: true });
    expect(ledger.today().agentUsd).toBe(100);
  });
});
