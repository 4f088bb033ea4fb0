/**
 * The schedule core: given the schedules, what is recorded of each, whether each one's previous run is
 * still going, and the time now, it decides which due times run, which wait, which are skipped or merged,
 * and when to look again. The shell (`io/automation/schedules.ts`) records the decision, delivers the runs
 * and arms one timer for the wake-up.
 *
 * State per schedule ({@link ScheduleState}): `decidedUpTo`, the time up to which every due time has been
 * decided (run, held, skipped or merged); `held`, a due time waiting for the previous run to end; `merged`,
 * how many later due times were folded into it.
 *
 * Rules (each a row of `test/core/schedule.test.ts`):
 * - Only due times after `decidedUpTo` are ever considered, and the new state (with `decidedUpTo = now`)
 *   is recorded in the transaction that delivers the run: no due time runs twice.
 * - A schedule seen for the first time starts from `since` (when it was made): nothing before runs.
 * - Of the due times since the last decision, the most recent runs if it is younger than `graceMs`; every
 *   older one (and that one, if it is not) is skipped, and said so once ({@link ScheduleAction} `missed`).
 * - While the previous run is still going, the due time waits (`held`, at most one per schedule); later
 *   ones are merged into it (said so once per wait); when the run ends the held one runs, saying how many
 *   it stands for.
 * - A paused schedule decides every due time as passed: nothing runs, nothing is missed, nothing waits.
 */

/** A schedule as the core sees it. */
export interface ScheduleView {
  /** Stable for ever: part of every run's key. */
  id: string;
  paused: boolean;
  /** When it was made: its first due time is after this. */
  since: number;
  /** The first due time strictly after a time, or `undefined` when none is left (a one-off that ran). */
  nextAfter(afterMs: number): number | undefined;
}

/** What is recorded of a schedule (SQLite, `store/schedule-table.ts`). */
export interface ScheduleState {
  decidedUpTo: number;
  held: number | undefined;
  merged: number;
}

/** What the shell does for a schedule. */
export type ScheduleAction =
  /** Deliver the run due at `due`; it stands for `merged` later due times too. */
  | { kind: 'run'; id: string; due: number; merged: number }
  /** Say in the chat that `count` due times (from `first` to `last`) were skipped; `more`: at least. */
  | { kind: 'missed'; id: string; count: number; first: number; last: number; more: boolean }
  /** Say in the chat that the run due at `held` waits and later due times are merged into it. */
  | { kind: 'waiting'; id: string; held: number };

/** One decision for all schedules. */
export interface ScheduleStep {
  /** New states to record (only those that changed), in the transaction that delivers the runs. */
  states: Map<string, ScheduleState>;
  actions: ScheduleAction[];
  /** When to look again: the next due time, or a re-check of a held run; undefined: nothing to wait for. */
  wakeAt: number | undefined;
}

/** What {@link decideSchedules} reads. */
export interface ScheduleInput {
  schedules: readonly ScheduleView[];
  states: ReadonlyMap<string, ScheduleState>;
  /** Whether the schedule's previous run is still going (its turn not finished). */
  busy(id: string): boolean;
  now: number;
  /** How old the most recent missed due time may be and still run; default {@link SCHEDULE_GRACE_MS}. */
  graceMs?: number;
  /** How soon a held run's previous one is checked again; default {@link HELD_RECHECK_MS}. */
  recheckMs?: number;
}

/** The default grace of a missed due time: one hour. */
export const SCHEDULE_GRACE_MS = 60 * 60_000;
/** How often a held run looks whether its previous one has ended. */
export const HELD_RECHECK_MS = 1_000;
/** The most missed due times counted one by one (a schedule down for long says "at least"). */
export const MISSED_COUNT_LIMIT = 1_000;

/** Decides every schedule at `input.now`; see the module comment. */
export function decideSchedules(input: ScheduleInput): ScheduleStep {
  const step: ScheduleStep = { states: new Map(), actions: [], wakeAt: undefined };
  const wake = (at: number | undefined): void => {
    if (at !== undefined && (step.wakeAt === undefined || at < step.wakeAt)) step.wakeAt = at;
  };
  for (const schedule of input.schedules) {
    const before = input.states.get(schedule.id);
    const state = decideOne(schedule, before, input, step.actions);
    if (!before || !sameState(before, state)) step.states.set(schedule.id, state);
    if (schedule.paused) continue;
    wake(
      state.held !== undefined
        ? input.now + (input.recheckMs ?? HELD_RECHECK_MS)
        : schedule.nextAfter(state.decidedUpTo),
    );
  }
  return step;
}

function decideOne(
  schedule: ScheduleView,
  before: ScheduleState | undefined,
  input: ScheduleInput,
  actions: ScheduleAction[],
): ScheduleState {
  const { now } = input;
  const from = before?.decidedUpTo ?? Math.min(schedule.since, now);
  const due = dueBetween(schedule, from, now);
  // Nothing came due: the state stands (so nothing is written), up to a held run that may now start.
  const decidedUpTo = due.count > 0 ? now : from;
  if (schedule.paused) return { decidedUpTo, held: undefined, merged: 0 };
  let held = before?.held;
  let merged = before?.merged ?? 0;
  let busy = input.busy(schedule.id);
  if (held !== undefined && !busy) {
    actions.push({ kind: 'run', id: schedule.id, due: held, merged });
    held = undefined;
    merged = 0;
    busy = true;
  }
  if (due.count > 0) {
    if (held !== undefined) {
      if (merged === 0) actions.push({ kind: 'waiting', id: schedule.id, held });
      merged += due.count;
    } else {
      const fresh = now - due.last <= (input.graceMs ?? SCHEDULE_GRACE_MS);
      const skipped = fresh ? due.count - 1 : due.count;
      if (skipped > 0) {
        actions.push({
          kind: 'missed',
          id: schedule.id,
          count: skipped,
          first: due.first,
          last: fresh ? (due.beforeLast ?? due.first) : due.last,
          more: due.more,
        });
      }
      if (fresh && busy) held = due.last;
      else if (fresh) actions.push({ kind: 'run', id: schedule.id, due: due.last, merged: 0 });
    }
  }
  return { decidedUpTo, held, merged };
}

/**
 * The due times in `(from, to]`: how many (counted up to a limit), the first, the last and the one before.
 */
function dueBetween(
  schedule: ScheduleView,
  from: number,
  to: number,
): { count: number; first: number; last: number; beforeLast: number | undefined; more: boolean } {
  let count = 0;
  let first = 0;
  let last = 0;
  let beforeLast: number | undefined;
  let at = schedule.nextAfter(from);
  while (at !== undefined && at <= to) {
    if (count === 0) first = at;
    beforeLast = count === 0 ? undefined : last;
    last = at;
    count++;
    if (count >= MISSED_COUNT_LIMIT) {
      // Too many to walk: the rest are counted as "more", and the last one is the newest before `to`
      // found by walking from close to `to` (a schedule's due times are increasing).
      const tail = lastBefore(schedule, at, to);
      if (tail.last !== last) {
        beforeLast = tail.beforeLast ?? last;
        last = tail.last;
        return { count: count + 1, first, last, beforeLast, more: true };
      }
      return { count, first, last, beforeLast, more: false };
    }
    at = schedule.nextAfter(at);
  }
  return { count, first, last, beforeLast, more: false };
}

/** The newest due time in `(from, to]` and the one before it, walking back from `to` by widening steps. */
function lastBefore(
  schedule: ScheduleView,
  from: number,
  to: number,
): { last: number; beforeLast: number | undefined } {
  for (let span = 60_000; ; span *= 4) {
    const start = Math.max(from, to - span);
    let last: number | undefined;
    let beforeLast: number | undefined;
    for (let at = schedule.nextAfter(start); at !== undefined && at <= to; at = schedule.nextAfter(at)) {
      beforeLast = last;
      last = at;
    }
    if (last !== undefined && (beforeLast !== undefined || start === from)) return { last, beforeLast };
    if (start === from) return { last: from, beforeLast: undefined };
  }
}

function sameState(a: ScheduleState, b: ScheduleState): boolean {
  return a.decidedUpTo === b.decidedUpTo && a.held === b.held && a.merged === b.merged;
}
