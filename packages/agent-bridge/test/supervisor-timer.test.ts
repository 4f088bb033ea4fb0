/**
 * The supervisor as the shell of `processStep`: one timer on the clock for the policy's wake-up. Output
 * read line by line moves the stuck watchdog's limit on each time; the timer armed for the earlier limit
 * is kept (its tick arms the later one), so a streaming turn re-arms nothing per line — and the stuck
 * report still comes once the turn really falls silent. The process is this test's own (alive, readable
 * in `/proc`); nothing is spawned.
 */
import { type AppFrame, ManualClock, silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import type { Session } from '../src/core/session/session.js';
import { readStartTime } from '../src/io/process/child.js';
import { Supervisor } from '../src/io/process/supervisor.js';

function rig(stuckAfterMs: number) {
  const clock = new ManualClock(1_000_000);
  const found = readStartTime(process.pid);
  if (!found.ok) throw new Error('cannot read this process in /proc');
  const frames: AppFrame[] = [];
  let armed = 0;
  const setTimeout = clock.setTimeout.bind(clock);
  clock.setTimeout = (run, ms) => {
    armed++;
    return setTimeout(run, ms);
  };
  const session = {
    agentState: () => 'running',
    state: {},
    statusFrame: () => ({ type: 'status', state: 'running' }),
  } as unknown as Session;
  const supervisor = new Supervisor(
    {
      stateDir: '/nonexistent',
      workDir: '/nonexistent',
      claudeBin: 'claude',
      env: {},
      restartOnExit: true,
      stuckAfterMs,
      crashLoop: { maxExits: 3, windowMs: 60_000 },
      log: silentLogger,
      clock,
    },
    {
      record: {
        child: { pid: process.pid, startTime: found.startTime, startedAt: 0 },
        exits: [],
        crashLoop: false,
        started: () => {},
        exited: () => {},
        retry: () => {},
        forget: () => {},
      },
      session,
      emit: (out) => void frames.push(...out),
      persist: () => {},
      onStarted: () => {},
      onExited: () => {},
      inTranscript: () => false,
      mayStart: () => false,
    },
  );
  const stuck = () => frames.filter((f) => f.type === 'operator_event' && f.kind === 'stuck').length;
  return { clock, supervisor, stuck, armed: () => armed };
}

describe('the supervisor arms one timer for the policy', () => {
  it('a turn streaming line by line re-arms nothing per line; silence past the limit is reported once', () => {
    const { clock, supervisor, stuck, armed } = rig(1000);
    supervisor.check();
    expect([armed(), clock.pending, clock.nextDue]).toEqual([1, 1, 1_001_001]);
    for (let i = 0; i < 200; i++) {
      clock.advance(10);
      supervisor.noteActivity();
    }
    // 2 s of output: the first timer fired at its limit and armed the later one, once; nothing reported.
    expect(armed()).toBe(2);
    expect(stuck()).toBe(0);
    clock.advance(1000);
    expect(stuck()).toBe(0);
    clock.advance(1);
    expect(stuck()).toBe(1);
    clock.advance(60_000);
    expect([stuck(), clock.pending]).toEqual([1, 0]);
  });
});
