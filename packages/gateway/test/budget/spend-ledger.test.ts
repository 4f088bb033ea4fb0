/**
 * The spend ledger over a real (in-memory) store on a manual clock: a turn's cost counts against the
 * agent and the user whose message opened it, a new turn over a budget is refused with one notice a
 * day, and the next local day starts from nothing.
 */
import { type FrameOf, ManualClock, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createSpendLedger } from '../../src/io/spend/spend-ledger.js';
import { meteredTranscriber } from '../../src/io/voice/voice-intake.js';
import { type GatewayStore, openGatewayStore } from '../../src/store/store.js';

const ADA = 11;
const BOB = 22;
const CHAT = { chatId: -100 };

let store: GatewayStore | undefined;
afterEach(() => store?.close());

/**
 * Where the ledger's messages go, recorded: passed to the bridge (to `onPass` too), marked unread, and
 * the notices told.
 */
function recorders(onPass: (frame: FrameOf<'user_message'>) => void = () => {}) {
  const unread: string[] = [];
  const told: string[] = [];
  return {
    unread,
    told,
    deps: {
      pass: onPass,
      turns: { refused: (ids: readonly string[]) => void unread.push(...ids) },
      tell: (_route: unknown, text: string) => void told.push(text),
      onRefused: () => {},
    },
  };
}

function world(
  spend: Parameters<typeof createSpendLedger>[0]['spend'],
  onPass?: (frame: FrameOf<'user_message'>) => void,
) {
  // 2026-12-01 20:00 UTC = 21:00 in Berlin.
  const clock = new ManualClock(Date.parse('2026-12-01T20:00:00Z'));
  const s = openGatewayStore(':memory:', clock);
  store = s;
  const { unread, told, deps } = recorders((frame) => onPass?.(frame));
  const ledger = createSpendLedger({ store: s, spend, ...deps, clock, logger: silentLogger });
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
  return { clock, ledger, message, turn, unread, told };
}

describe('spend ledger', () => {
  it('refuses the turn after a user’s budget is spent, tells them once, and lets them in the next day', () => {
    const { clock, ledger, message, turn, told, unread } = world({
      perUserDailyUsd: 1,
      timeZone: 'Europe/Berlin',
    });
    turn(ADA, 0.6);
    expect(ledger.weigh(message(ADA))).toEqual({ admit: true });
    turn(ADA, 0.5); // a turn running when the budget was reached is not cut: its cost counts
    const refused = ledger.weigh(message(ADA));
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
    expect(ledger.weigh(message(ADA))).toMatchObject({ admit: false, notice: undefined });
    // The ledger told the notice itself; marking the messages unread is the turn machine's, which got
    // the verdict with them (nothing is reported back into the turns for a message weighed first).
    expect(told).toEqual([refused.admit === false ? refused.notice : '']);
    expect(unread).toEqual([]);
    expect(ledger.weigh(message(BOB))).toEqual({ admit: true });
    expect(ledger.today()).toMatchObject({
      day: '2026-12-01',
      agentUsd: 1.1,
      conversations: [{ route: CHAT, usd: 1.1 }],
    });
    // 23:59 in Berlin: still today. Midnight: a new day.
    clock.advance(2 * 3600_000 + 59 * 60_000);
    expect(ledger.weigh(message(ADA)).admit).toBe(false);
    clock.advance(60_000);
    expect(ledger.weigh(message(ADA))).toEqual({ admit: true });
    expect(ledger.today()).toMatchObject({ day: '2026-12-02', agentUsd: 0, conversations: [] });
  });

  it('runs nobody typed count against the agent’s budget only, and are refused once it is spent', () => {
    const { ledger, message, turn } = world({ dailyUsd: 2, perUserDailyUsd: 1.5 });
    turn(undefined, 1.5); // a webhook's run: no sender
    expect(ledger.weigh(message(ADA))).toEqual({ admit: true });
    turn(ADA, 0.6);
    const run = ledger.weigh(message(0));
    expect(run).toMatchObject({ admit: false, scope: 'agent' });
    expect(run.admit === false && run.notice).toContain(
      'The agent’s daily budget of $2.00 is used up: $2.10 spent today',
    );
    expect(run.admit === false && run.notice).toContain('2026-12-02 00:00 (UTC)');
  });

  it('without budgets everything passes and the cost is still counted', () => {
    const { ledger, message, turn } = world(undefined);
    turn(ADA, 100);
    expect(ledger.weigh(message(ADA))).toEqual({ admit: true });
    expect(ledger.today().agentUsd).toBe(100);
  });
});

describe('budgets that hold while turns run at once (issue 27)', () => {
  /**
   * Ten topics written at once under a $1 budget, each turn costing `usd`: the ledger passes what it
   * admits to a bridge that starts the turn at once and ends it later, oldest first.
   */
  function tenAtOnce(usd: number, estimate: number | undefined) {
    const { ledger, clock, unread } = world(
      {
        dailyUsd: 1,
        ...(estimate !== undefined ? { turnEstimateUsd: estimate } : {}),
      },
      (frame) => start(frame),
    );
    const s = store as GatewayStore;
    const running: FrameOf<'user_message'>[] = [];
    let turns = 0;
    const start = (frame: FrameOf<'user_message'>) => {
      running.push(frame);
      ledger.observe({
        type: 'turn_started',
        turnId: `turn-${++turns}`,
        route: frame.route,
        inboundIds: [frame.inboundId],
        request: frame.text,
        startedAt: clock.now(),
      });
    };
    const frames = Array.from({ length: 10 }, (_, i): FrameOf<'user_message'> => {
      const frame: FrameOf<'user_message'> = {
        type: 'user_message',
        inboundId: `topic-${i}`,
        route: { chatId: -100, threadId: i + 1 },
        telegramMessageId: i + 1,
        sender: { id: ADA, name: 'Ada' },
        text: `question ${i}`,
        attachments: [],
        sentAt: clock.now(),
      };
      s.addInbound({ inboundId: frame.inboundId, frame });
      return frame;
    });
    // The verdict the turn machine would get with each message: a refused one it marks unread itself.
    for (const frame of frames) {
      const verdict = ledger.weigh(frame);
      if (verdict.admit === true) start(frame);
      else if (verdict.admit === false) unread.push(frame.inboundId);
    }
    const admittedAtOnce = running.length;
    // The turns end one by one, each ending letting the held messages be weighed again.
    let ended = 0;
    while (running.length > 0) {
      running.shift();
      clock.advance(1000);
      ledger.observe({ type: 'turn_ended', turnId: `turn-${++ended}`, outcome: 'success', costUsd: usd });
    }
    return { admittedAtOnce, turns, unread, spent: ledger.today().agentUsd };
  }

  it('ten concurrent turns costing the estimate stop at the cap plus at most one estimate', () => {
    const run = tenAtOnce(0.3, 0.3);
    // $0, $0.30, $0.60, $0.90 reserved when each was admitted: the fifth would start at $1.20.
    expect(run.admittedAtOnce).toBe(4);
    expect(run.turns).toBe(4);
    expect(run.spent).toBeCloseTo(1.2, 10);
    expect(run.spent).toBeLessThanOrEqual(1 + 0.3);
    // The rest were held while the four ran, then refused once the budget was used up: none is lost.
    expect(run.unread).toHaveLength(6);
  });

  it('turns cheaper than the estimate let the held messages in as they end, still within one estimate', () => {
    const run = tenAtOnce(0.1, 0.3);
    expect(run.admittedAtOnce).toBe(4);
    expect(run.turns + run.unread.length).toBe(10);
    expect(run.turns).toBeGreaterThan(4);
    expect(run.spent).toBeLessThanOrEqual(1 + 0.3);
  });

  it('a turn that ended without a result is charged the estimate, never nothing', () => {
    const { ledger } = world({ dailyUsd: 5, turnEstimateUsd: 0.4 });
    ledger.observe({
      type: 'turn_started',
      turnId: 't-died',
      route: CHAT,
      inboundIds: [],
      request: 'x',
      startedAt: 0,
    });
    ledger.observe({ type: 'turn_ended', turnId: 't-died', outcome: 'error', error: 'the process exited' });
    expect(ledger.today().agentUsd).toBeCloseTo(0.4, 10);
  });

  it('/compact and a transcription count against the budget, and /compact is refused once it is used up', () => {
    const { ledger } = world({ dailyUsd: 1, turnEstimateUsd: 0.2 });
    expect(ledger.admitCommand('c1', CHAT, ADA)).toEqual({ admit: true });
    ledger.observe({ type: 'command_result', commandId: 'c1', ok: true, costUsd: 0.7 });
    ledger.chargeTranscription('voice-1', CHAT, ADA, 600); // ten minutes at $0.006
    expect(ledger.today().agentUsd).toBeCloseTo(0.76, 10);
    ledger.observe({ type: 'command_result', commandId: 'c2', ok: true, costUsd: 5 }); // not a gated command
    expect(ledger.today().agentUsd).toBeCloseTo(0.76, 10);
    expect(ledger.admitCommand('c3', CHAT, ADA)).toEqual({ admit: true });
    ledger.observe({ type: 'command_result', commandId: 'c3', ok: true, costUsd: 0.3 });
    expect(ledger.admitCommand('c4', CHAT, ADA)).toMatchObject({ admit: false, scope: 'agent' });
    expect(ledger.allows(CHAT, ADA)).toMatchObject({ admit: false });
  });

  it('a transcription is booked at its length, and none is made once the budget is used up', async () => {
    const { ledger } = world({ dailyUsd: 1 });
    let heard = 0;
    const inner = {
      transcribe: async () => {
        heard++;
        return { kind: 'text' as const, text: 'hello' };
      },
    };
    const who = { id: 'voice-1', route: CHAT, userId: ADA };
    const note = { path: '/tmp/note.ogg', durationSeconds: 120 };
    expect(await meteredTranscriber(inner, ledger, who).transcribe(note)).toEqual({
      kind: 'text',
      text: 'hello',
    });
    expect(ledger.today().agentUsd).toBeCloseTo(0.012, 10);
    ledger.chargeTranscription('big', CHAT, ADA, 60 * 200); // $1.20 of minutes: the budget is used up
    expect(await meteredTranscriber(inner, ledger, { ...who, id: 'voice-2' }).transcribe(note)).toEqual({
      kind: 'unconfigured',
    });
    expect(heard).toBe(1);
  });

  it('a turn still running when the gateway restarted is reserved again by the new ledger', () => {
    const { clock, message } = world({ dailyUsd: 0.3, turnEstimateUsd: 0.3 });
    const s = store as GatewayStore;
    s.upsertTurn({
      turnId: 'running-1',
      route: { chatId: -200 },
      request: 'x',
      startedAt: clock.now() - 60_000,
    });
    const after = createSpendLedger({
      store: s,
      spend: { dailyUsd: 0.3, turnEstimateUsd: 0.3 },
      ...recorders().deps,
      clock,
      logger: silentLogger,
    });
    expect(after.weigh(message(ADA))).toMatchObject({ admit: 'hold', scope: 'agent' });
    after.observe({ type: 'turn_ended', turnId: 'running-1', outcome: 'success', costUsd: 0.1 });
    expect(after.weigh(message(ADA))).toEqual({ admit: true });
  });
});
