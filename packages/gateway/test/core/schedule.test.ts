/**
 * The schedule core's rules (`core/automation/schedule.ts`), one table row each, on a manual clock, with real
 * cron patterns (`io/automation/cron.ts`).
 */
import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import {
  decideSchedules,
  type ScheduleInput,
  type ScheduleState,
  type ScheduleView,
} from '../../src/core/automation/schedule.js';
import { cronDue, onceDue } from '../../src/io/automation/cron.js';

const T0 = Date.UTC(2026, 11, 1, 9, 0, 0);
const s = (n: number): number => n * 1000;
/** Every 10 s, six fields. */
const every10: ScheduleView = { id: 'tick', paused: false, since: T0, nextAfter: cronDue('*/10 * * * * *') };
const state = (decidedUpTo: number, held?: number, merged = 0): ScheduleState => ({
  decidedUpTo,
  held,
  merged,
});

interface Row {
  rule: string;
  schedule?: ScheduleView;
  before?: ScheduleState;
  busy?: boolean;
  at: number;
  graceMs?: number;
  actions: unknown[];
  after?: Partial<ScheduleState> | 'unchanged';
  wakeAt: number | undefined;
}

const rows: Row[] = [
  {
    rule: 'a schedule seen first starts from when it was made: its state is recorded, nothing runs',
    at: T0 + s(5),
    actions: [],
    after: { decidedUpTo: T0, held: undefined },
    wakeAt: T0 + s(10),
  },
  {
    rule: 'a due time reached runs once',
    before: state(T0),
    at: T0 + s(10),
    actions: [{ kind: 'run', id: 'tick', due: T0 + s(10), merged: 0 }],
    after: { decidedUpTo: T0 + s(10) },
    wakeAt: T0 + s(20),
  },
  {
    rule: 'a due time decided already never runs again',
    before: state(T0 + s(10)),
    at: T0 + s(10),
    actions: [],
    after: 'unchanged',
    wakeAt: T0 + s(20),
  },
  {
    rule: 'a timer that fires late still runs the due time, once',
    before: state(T0),
    at: T0 + s(13),
    actions: [{ kind: 'run', id: 'tick', due: T0 + s(10), merged: 0 }],
    wakeAt: T0 + s(20),
  },
  {
    rule: 'missed while down, the newest inside the grace: it runs, the older ones are skipped and said so',
    before: state(T0),
    at: T0 + s(35),
    graceMs: s(60),
    actions: [
      { kind: 'missed', id: 'tick', count: 2, first: T0 + s(10), last: T0 + s(20), more: false },
      { kind: 'run', id: 'tick', due: T0 + s(30), merged: 0 },
    ],
    wakeAt: T0 + s(40),
  },
  {
    rule: 'missed while down, the newest outside the grace: all skipped and said so, none runs',
    schedule: { ...every10, nextAfter: onceDue(T0 + s(10)) },
    before: state(T0),
    at: T0 + s(10) + 3_600_001,
    actions: [{ kind: 'missed', id: 'tick', count: 1, first: T0 + s(10), last: T0 + s(10), more: false }],
    wakeAt: undefined,
  },
  {
    rule: 'due while the previous run is going: it waits, without a note yet',
    before: state(T0),
    busy: true,
    at: T0 + s(10),
    actions: [],
    after: { held: T0 + s(10), merged: 0 },
    wakeAt: T0 + s(11),
  },
  {
    rule: 'a later due time while one waits is merged into it, and said so once',
    before: state(T0 + s(10), T0 + s(10)),
    busy: true,
    at: T0 + s(20),
    actions: [{ kind: 'waiting', id: 'tick', held: T0 + s(10) }],
    after: { held: T0 + s(10), merged: 1 },
    wakeAt: T0 + s(21),
  },
  {
    rule: 'merging more is not said again',
    before: state(T0 + s(20), T0 + s(10), 1),
    busy: true,
    at: T0 + s(30),
    actions: [],
    after: { held: T0 + s(10), merged: 2 },
    wakeAt: T0 + s(31),
  },
  {
    rule: 'the previous run ended: the held run goes, standing for the merged ones',
    before: state(T0 + s(30), T0 + s(10), 2),
    busy: false,
    at: T0 + s(33),
    actions: [{ kind: 'run', id: 'tick', due: T0 + s(10), merged: 2 }],
    after: { held: undefined, merged: 0, decidedUpTo: T0 + s(30) },
    wakeAt: T0 + s(40),
  },
  {
    rule: 'a paused schedule runs nothing, misses nothing and sets no timer',
    schedule: { ...every10, paused: true },
    before: state(T0, T0 + s(10)),
    at: T0 + s(45),
    actions: [],
    after: { decidedUpTo: T0 + s(45), held: undefined },
    wakeAt: undefined,
  },
  {
    rule: 'a one-off runs once, then sets no timer',
    schedule: { ...every10, nextAfter: onceDue(T0 + s(7)) },
    before: state(T0),
    at: T0 + s(7),
    actions: [{ kind: 'run', id: 'tick', due: T0 + s(7), merged: 0 }],
    wakeAt: undefined,
  },
  {
    rule: 'down for long under a dense schedule: the missed count says "at least", the newest still runs',
    schedule: { ...every10, nextAfter: cronDue('* * * * * *') },
    before: state(T0),
    at: T0 + 2 * 3_600_000,
    actions: [
      {
        kind: 'missed',
        id: 'tick',
        count: 1000,
        first: T0 + s(1),
        last: T0 + 2 * 3_600_000 - s(1),
        more: true,
      },
      { kind: 'run', id: 'tick', due: T0 + 2 * 3_600_000, merged: 0 },
    ],
    wakeAt: T0 + 2 * 3_600_000 + s(1),
  },
];

describe('schedule core', () => {
  for (const row of rows) {
    it(row.rule, () => {
      const clock = new ManualClock(row.at);
      const schedule = row.schedule ?? every10;
      const states = new Map<string, ScheduleState>(row.before ? [[schedule.id, row.before]] : []);
      const input: ScheduleInput = {
        schedules: [schedule],
        states,
        busy: () => row.busy ?? false,
        now: clock.now(),
        ...(row.graceMs !== undefined ? { graceMs: row.graceMs } : {}),
      };
      const step = decideSchedules(input);
      expect(step.actions).toEqual(row.actions);
      expect(step.wakeAt).toBe(row.wakeAt);
      if (row.after === 'unchanged') expect(step.states.has(schedule.id)).toBe(false);
      else if (row.after) expect(step.states.get(schedule.id)).toMatchObject(row.after);
    });
  }

  it('replaying a run of due times from the recorded states never runs a due time twice', () => {
    const clock = new ManualClock(T0);
    let states = new Map<string, ScheduleState>([['tick', state(T0)]]);
    const ran: number[] = [];
    for (let i = 0; i < 40; i++) {
      clock.advance(s(3));
      // Decide twice at each instant, as a crash before the timer's next tick would: the second changes
      // nothing.
      for (let twice = 0; twice < 2; twice++) {
        const step = decideSchedules({ schedules: [every10], states, busy: () => false, now: clock.now() });
        for (const a of step.actions) if (a.kind === 'run') ran.push(a.due);
        states = new Map([...states, ...step.states]);
      }
    }
    expect(ran).toEqual(Array.from({ length: 12 }, (_, i) => T0 + s(10 * (i + 1))));
  });
});
