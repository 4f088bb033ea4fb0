/**
 * The process policy's two machines as tables on a manual clock: each row feeds one event stamped with
 * the clock's time (or lets the clock run, so the wake-up the last step asked for comes as a `tick`, the
 * way the supervisor's and the pool's one timer delivers it), and names the actions that come out and the
 * wake-up asked for next.
 */
import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  blockedAt,
  type FailureAction,
  type FailureEvent,
  type Failures,
  failureStep,
  initialProcessState,
  type ProcessAction,
  type ProcessEvent,
  type ProcessPolicy,
  type ProcessState,
  processStep,
} from '../../src/core/process/policy.js';

const policy: ProcessPolicy = {
  restartOnExit: true,
  crashLoop: { maxExits: 3, windowMs: 60_000 },
  stuckAfterMs: 120_000,
};

/** Events without their time: the driver stamps them with the clock's. */
type Input = { kind: 'checked'; running: boolean } | { kind: Exclude<ProcessEvent['kind'], 'checked'> };

/** A shell in miniature: performs nothing, records the actions, arms one manual timer for the wake-up. */
function processDriver(p: ProcessPolicy = policy, start = 1_000_000) {
  const clock = new ManualClock(start);
  let state: ProcessState = initialProcessState({ exits: [], crashLoop: false }, clock.now());
  let timer: ReturnType<ManualClock['setTimeout']> | undefined;
  let wakeAt: number | undefined;
  const log: ProcessAction[] = [];
  const feed = (event: ProcessEvent): void => {
    const step = processStep(p, state, event);
    state = step.state;
    log.push(...step.actions);
    clock.clearTimeout(timer);
    wakeAt = step.wakeAt;
    timer =
      wakeAt === undefined
        ? undefined
        : clock.setTimeout(() => feed({ kind: 'tick', at: clock.now() }), wakeAt - clock.now());
  };
  return {
    clock,
    get state() {
      return state;
    },
    /** Feeds `input` now; returns the actions and the wake-up, relative to now. */
    send(input: Input) {
      log.length = 0;
      feed({ ...input, at: clock.now() } as ProcessEvent);
      return { actions: [...log], wakeInMs: wakeAt === undefined ? undefined : wakeAt - clock.now() };
    },
    /** Lets `ms` pass; returns what the timer's ticks produced meanwhile. */
    wait(ms: number) {
      log.length = 0;
      clock.advance(ms);
      return { actions: [...log], wakeInMs: wakeAt === undefined ? undefined : wakeAt - clock.now() };
    },
  };
}

const kinds = (actions: readonly { kind: string }[]) => actions.map((a) => a.kind);

describe('process policy: backoff', () => {
  it('starts at 500 ms and doubles per recent failure, up to 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(backoffMs)).toEqual([
      500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ]);
  });
});

describe('process policy: exits and restarts', () => {
  it('exits spaced on the clock restart after a growing backoff, a crash loop past the cap waits for a person', () => {
    const d = processDriver();
    // [what happens, actions out, wake-up asked for (ms from now)]
    const rows: [
      string,
      () => { actions: ProcessAction[]; wakeInMs: number | undefined },
      string[],
      number | undefined,
    ][] = [
      ['exit 1', () => d.send({ kind: 'exited' }), ['report_exit', 'save_exits'], 500],
      ['backoff passes: start', () => d.wait(500), ['start'], undefined],
      ['the process starts', () => d.send({ kind: 'started' }), [], undefined],
      ['exit 2, 500 ms later', () => d.send({ kind: 'exited' }), ['report_exit', 'save_exits'], 1000],
      ['999 ms: nothing yet', () => d.wait(999), [], 1],
      ['1000 ms: start', () => d.wait(1), ['start'], undefined],
      ['exit 3', () => d.send({ kind: 'exited' }), ['report_exit', 'save_exits'], 2000],
      ['start', () => d.wait(2000), ['start'], undefined],
      [
        'exit 4 within the minute: crash loop',
        () => d.send({ kind: 'exited' }),
        ['report_exit', 'save_exits', 'report_crash_loop'],
        undefined,
      ],
      ['a minute of nothing', () => d.wait(60_000), [], undefined],
      ['a person asks: loop lifted', () => d.send({ kind: 'asked' }), ['lift_crash_loop'], undefined],
      ['asking again changes nothing', () => d.send({ kind: 'asked' }), [], undefined],
      [
        'exit after the window: a fresh first backoff',
        () => d.send({ kind: 'exited' }),
        ['report_exit', 'save_exits'],
        500,
      ],
    ];
    for (const [name, run, actions, wakeInMs] of rows) {
      const out = run();
      expect({ name, actions: kinds(out.actions), wakeInMs: out.wakeInMs }).toEqual({
        name,
        actions,
        wakeInMs,
      });
    }
  });

  it('says what each exit keeps: the exits of the window, the flag, and whether a process follows', () => {
    const d = processDriver();
    const first = d.send({ kind: 'exited' }).actions;
    expect(first).toEqual([
      { kind: 'report_exit', restarting: true },
      { kind: 'save_exits', exits: [1_000_000], crashLoop: false },
    ]);
    for (let i = 0; i < 3; i++) d.send({ kind: 'exited' });
    expect(d.state).toMatchObject({ crashLoop: true, restartAt: undefined });
    expect(d.state.exits).toHaveLength(4);
  });

  it.each([
    { name: 'restartOnExit off', p: { ...policy, restartOnExit: false }, stop: false },
    { name: 'the conversation is stopping', p: policy, stop: true },
  ])('no restart when $name, yet the exit is counted', ({ p, stop }) => {
    const d = processDriver(p);
    if (stop) d.send({ kind: 'stopped' });
    const out = d.send({ kind: 'exited' });
    expect(out.actions[0]).toEqual({ kind: 'report_exit', restarting: false });
    expect(out.wakeInMs).toBeUndefined();
    expect(d.state.exits).toHaveLength(1);
  });

  it('a stop during the backoff cancels the restart; a process started by a message cancels it too', () => {
    const d = processDriver();
    d.send({ kind: 'exited' });
    expect(d.send({ kind: 'stopped' }).wakeInMs).toBeUndefined();
    expect(d.wait(10_000).actions).toEqual([]);
    const e = processDriver();
    e.send({ kind: 'exited' });
    expect(e.send({ kind: 'started' }).wakeInMs).toBeUndefined();
    expect(e.wait(10_000).actions).toEqual([]);
  });
});

describe('process policy: stuck watchdog', () => {
  it('a running turn silent past the limit is reported once per silence, at the limit plus one', () => {
    const d = processDriver();
    const rows: [
      string,
      () => { actions: ProcessAction[]; wakeInMs: number | undefined },
      string[],
      number | undefined,
    ][] = [
      ['idle: no watch', () => d.send({ kind: 'checked', running: false }), [], undefined],
      [
        'a turn runs: due past the limit',
        () => {
          d.send({ kind: 'activity' });
          return d.send({ kind: 'checked', running: true });
        },
        [],
        120_001,
      ],
      ['exactly the limit: not yet', () => d.wait(120_000), [], 1],
      ['one past: reported', () => d.wait(1), ['report_stuck'], undefined],
      ['still silent: not again', () => d.wait(500_000), [], undefined],
      ['output: the silence starts again', () => d.send({ kind: 'activity' }), [], 120_001],
      ['and is reported again', () => d.wait(120_001), ['report_stuck'], undefined],
      [
        'the turn ends: nothing watched',
        () => {
          d.send({ kind: 'activity' });
          return d.send({ kind: 'checked', running: false });
        },
        [],
        undefined,
      ],
    ];
    for (const [name, run, actions, wakeInMs] of rows) {
      const out = run();
      expect({ name, actions: kinds(out.actions), wakeInMs: out.wakeInMs }).toEqual({
        name,
        actions,
        wakeInMs,
      });
    }
  });

  it('a liveness check past the limit reports it too, with how long the turn has been silent', () => {
    const state = initialProcessState({ exits: [], crashLoop: false }, 0);
    const out = processStep(policy, state, { kind: 'checked', at: 130_000, running: true });
    expect(out.actions).toEqual([{ kind: 'report_stuck', silentMs: 130_000 }]);
    expect(out.wakeAt).toBeUndefined();
  });
});

describe('process policy: conversations that fail', () => {
  /** The pool in miniature: stamps events, records actions, one manual timer sends `tick`s. */
  function failureDriver() {
    const clock = new ManualClock(0);
    let failures: Failures = new Map();
    let wakeAt: number | undefined;
    let timer: ReturnType<ManualClock['setTimeout']> | undefined;
    let busy = new Set<string>();
    const log: FailureAction[] = [];
    const feed = (event: FailureEvent): void => {
      const step = failureStep(failures, event);
      failures = step.failures;
      log.push(...step.actions);
      clock.clearTimeout(timer);
      wakeAt = step.wakeAt;
      timer =
        wakeAt === undefined
          ? undefined
          : clock.setTimeout(
              () => feed({ kind: 'tick', at: clock.now(), busy }),
              Math.max(0, wakeAt - clock.now()),
            );
    };
    const out = () => {
      const actions = [...log];
      log.length = 0;
      return { actions, wakeInMs: wakeAt === undefined ? undefined : wakeAt - clock.now() };
    };
    return {
      clock,
      get failures() {
        return failures;
      },
      setBusy: (keys: string[]) => {
        busy = new Set(keys);
      },
      failed: (key: string) => {
        feed({ kind: 'failed', key, reason: 'EISDIR', at: clock.now() });
        return out();
      },
      opened: (key: string) => {
        feed({ kind: 'opened', key });
        return out();
      },
      wait: (ms: number) => {
        clock.advance(ms);
        return out();
      },
    };
  }

  it('backs off doubling per failure in a row, reports the first only, retries when due, forgets on success', () => {
    const d = failureDriver();
    const rows: [
      string,
      () => { actions: FailureAction[]; wakeInMs: number | undefined },
      FailureAction[],
      number | undefined,
    ][] = [
      [
        'first failure: reported',
        () => d.failed('a'),
        [{ kind: 'report', key: 'a', reason: 'EISDIR', retryInMs: 500 }],
        500,
      ],
      ['499 ms: still blocked', () => d.wait(499), [], 1],
      ['500 ms: retried', () => d.wait(1), [{ kind: 'retry', key: 'a' }], undefined],
      ['the retry fails: not reported again, 1 s', () => d.failed('a'), [], 1000],
      ['retried', () => d.wait(1000), [{ kind: 'retry', key: 'a' }], undefined],
      ['fails again: 2 s', () => d.failed('a'), [], 2000],
      ['retried', () => d.wait(2000), [{ kind: 'retry', key: 'a' }], undefined],
      ['opened: forgotten', () => d.opened('a'), [], undefined],
      [
        'a new run is reported again',
        () => d.failed('a'),
        [{ kind: 'report', key: 'a', reason: 'EISDIR', retryInMs: 500 }],
        500,
      ],
    ];
    for (const [name, run, actions, wakeInMs] of rows) {
      expect({ name, ...run() }).toEqual({ name, actions, wakeInMs });
    }
  });

  it('blocks a conversation exactly until its retry time', () => {
    const d = failureDriver();
    d.failed('a');
    expect(blockedAt(d.failures, 499)).toEqual(new Set(['a']));
    expect(blockedAt(d.failures, 500)).toEqual(new Set());
  });

  it('a conversation its own frames open is not retried, and does not make the pool wake again and again', () => {
    const d = failureDriver();
    d.failed('a');
    d.failed('b');
    d.failed('b');
    d.setBusy(['a']);
    // 'b' failed twice (1 s); 'a' once (500 ms) but is busy: the tick at 500 retries nothing and asks for
    // 'b''s time only.
    expect(d.wait(500)).toEqual({ actions: [], wakeInMs: 500 });
    expect(d.wait(500)).toEqual({ actions: [{ kind: 'retry', key: 'b' }], wakeInMs: undefined });
    expect(d.opened('a')).toEqual({ actions: [], wakeInMs: undefined });
  });

  it('several conversations fail independently: each its own backoff and report', () => {
    const d = failureDriver();
    expect(d.failed('a').actions).toHaveLength(1);
    d.wait(200);
    expect(d.failed('b')).toEqual({
      actions: [{ kind: 'report', key: 'b', reason: 'EISDIR', retryInMs: 500 }],
      wakeInMs: 300,
    });
    expect(d.wait(300).actions).toEqual([{ kind: 'retry', key: 'a' }]);
    expect(d.wait(200).actions).toEqual([{ kind: 'retry', key: 'b' }]);
  });
});
