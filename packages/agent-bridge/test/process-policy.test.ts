import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  conversationFailed,
  exitVerdict,
  type Failure,
  mayRetry,
  type ProcessPolicy,
  stuckVerdict,
} from '../src/core/process-policy.js';

const policy: ProcessPolicy = {
  restartOnExit: true,
  crashLoop: { maxExits: 3, windowMs: 60_000 },
  stuckAfterMs: 120_000,
};

describe('process policy: exits', () => {
  it('backs off from 500 ms, doubling per recent failure, up to 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(backoffMs)).toEqual([
      500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ]);
  });

  it('exits spaced on the clock: restarts with growing backoff, a crash loop past the cap, old exits forgotten', () => {
    const clock = new ManualClock(1_000_000);
    let exits: number[] = [];
    const rows: [advanceMs: number, restartInMs: number | undefined, crashLoop: boolean, kept: number][] = [
      [0, 500, false, 1],
      [1_000, 1000, false, 2],
      [1_000, 2000, false, 3],
      [1_000, undefined, true, 4], // a fourth within the minute: a crash loop, no restart
      [120_000, 500, false, 1], // the window has passed: a fresh start
    ];
    for (const [advanceMs, restartInMs, crashLoop, kept] of rows) {
      clock.advance(advanceMs);
      const verdict = exitVerdict(policy, exits, clock.now(), false);
      expect({
        restartInMs: verdict.restartInMs,
        crashLoop: verdict.crashLoop,
        kept: verdict.exits.length,
      }).toEqual({
        restartInMs,
        crashLoop,
        kept,
      });
      expect(verdict.restarting).toBe(restartInMs !== undefined);
      exits = verdict.exits;
    }
  });

  it.each([
    { name: 'restartOnExit off', policy: { ...policy, restartOnExit: false }, stopped: false },
    { name: 'the conversation is stopping', policy, stopped: true },
  ])('no restart when $name, yet the exit is counted', ({ policy, stopped }) => {
    const verdict = exitVerdict(policy, [], 5, stopped);
    expect(verdict).toEqual({ exits: [5], crashLoop: false, restarting: false });
  });
});

describe('process policy: stuck watchdog', () => {
  it.each([
    {
      name: 'running and silent past the limit: reported',
      running: true,
      reported: false,
      silentMs: 120_001,
      report: true,
    },
    {
      name: 'silent exactly the limit: not yet',
      running: true,
      reported: false,
      silentMs: 120_000,
      report: false,
    },
    {
      name: 'already reported this silence',
      running: true,
      reported: true,
      silentMs: 500_000,
      report: false,
    },
    { name: 'no turn running', running: false, reported: false, silentMs: 500_000, report: false },
  ])('$name', ({ running, reported, silentMs, report }) => {
    const clock = new ManualClock(10_000);
    const lastActivityAt = clock.now();
    clock.advance(silentMs);
    const verdict = stuckVerdict(policy, { running, reported, lastActivityAt }, clock.now());
    expect(verdict).toEqual(report ? { silentMs } : undefined);
  });
});

describe('process policy: a conversation that fails', () => {
  it('is blocked until its backoff passes, doubling per failure in a row, reported once per run', () => {
    const clock = new ManualClock(0);
    let failure: Failure | undefined;
    const reports: boolean[] = [];
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const next = conversationFailed(failure, 'EISDIR', clock.now());
      failure = next.failure;
      reports.push(next.report);
      waits.push(failure.retryAt - clock.now());
      expect(mayRetry(failure, clock.now())).toBe(false);
      clock.advance(failure.retryAt - clock.now() - 1);
      expect(mayRetry(failure, clock.now())).toBe(false);
      clock.advance(1);
      expect(mayRetry(failure, clock.now())).toBe(true);
    }
    expect(waits).toEqual([500, 1000, 2000, 4000]);
    expect(reports).toEqual([true, false, false, false]);
    expect(failure).toMatchObject({ failures: 4, reason: 'EISDIR' });
    expect(mayRetry(undefined, 0)).toBe(true);
  });
});
