/**
 * The process policy, as two pure machines in the shape of `card/src/cadence.ts`: events stamped with
 * the caller's time go in; the next state, the actions for the shell to perform and the time of its next
 * wake-up come out. Nothing here reads a clock, arms a timer or does I/O.
 *
 * **One conversation's process** ({@link processStep}, performed by `supervisor.ts`):
 * - *Exits.* An exit is counted with the exits of the last `crashLoop.windowMs`; more than
 *   `crashLoop.maxExits` of them is a crash loop: no restart until a person asks again (a message). Else,
 *   with `restartOnExit` and unless the conversation is being stopped, a new process is due after
 *   {@link backoffMs} of the recent exits: the wake-up, then a `start` action.
 * - *Stuck watchdog.* A running turn silent (no output, no input) for more than `stuckAfterMs` is
 *   reported once per silence: due one millisecond past the limit.
 *
 * **The conversations that failed** ({@link failureStep}, performed by `pool.ts`): a conversation whose
 * opening or serving threw is blocked until its retry time; each failure in a row doubles the wait; it is
 * reported in its own chat the first time only, so a failure that persists does not flood the chat. Past
 * its backoff it is opened again (`retry`), unless something else opens it anyway (a frame of it waits).
 *
 * Backoff: 500 ms, doubling per recent failure, at most 30 s — the same curve for exits and failures.
 */

/** The part of the bridge's options this policy reads. */
export interface ProcessPolicy {
  /** Start a new process (with `--resume`) when it exits by itself. */
  restartOnExit: boolean;
  crashLoop: { maxExits: number; windowMs: number };
  stuckAfterMs: number;
}

/** Backoff for the `failures`-th failure in a row (1 for the first). */
export function backoffMs(failures: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, failures - 1));
}

// --- one conversation's process ------------------------------------------------------------------------

/**
 * What the policy holds for one conversation's process. `exits` and `crashLoop` outlive the bridge (the
 * shell keeps them in the conversation's snapshot, see the `save_exits` action); the rest lives with the
 * supervisor.
 */
export interface ProcessState {
  /** Exits within the crash-loop window, oldest first (ms). */
  readonly exits: readonly number[];
  /** Restarts are off until a person asks again. */
  readonly crashLoop: boolean;
  /** A new process is due at this time (an exit's backoff); `undefined` when none is. */
  readonly restartAt: number | undefined;
  /** A turn is running (as the last check saw it). */
  readonly running: boolean;
  /** The last stdout line read or input written (ms). */
  readonly lastActivityAt: number;
  /** This silence was reported already. */
  readonly stuckReported: boolean;
  /** The conversation is being stopped: nothing restarts. */
  readonly stopped: boolean;
}

/** The state of a supervisor that starts at `now`, from the snapshot's exits and crash-loop flag. */
export function initialProcessState(
  saved: { exits: readonly number[]; crashLoop: boolean },
  now: number,
): ProcessState {
  return {
    exits: saved.exits,
    crashLoop: saved.crashLoop,
    restartAt: undefined,
    running: false,
    lastActivityAt: now,
    stuckReported: false,
    stopped: false,
  };
}

/** What happened, at `at` (ms, the caller's clock). */
export type ProcessEvent =
  /** A liveness check found the process alive; `running` is whether a turn runs. */
  | { readonly kind: 'checked'; readonly at: number; readonly running: boolean }
  /** A liveness check found the process gone. */
  | { readonly kind: 'exited'; readonly at: number }
  /** A stdout line was read or input written: the silence starts again. */
  | { readonly kind: 'activity'; readonly at: number }
  /** A process was started (whatever started it): no restart is due any more. */
  | { readonly kind: 'started'; readonly at: number }
  /** A person asked for a process (a message): after a crash loop, that is the go-ahead. */
  | { readonly kind: 'asked'; readonly at: number }
  /** The conversation is being stopped. */
  | { readonly kind: 'stopped'; readonly at: number }
  /** The wake-up this machine asked for came. */
  | { readonly kind: 'tick'; readonly at: number };

/** What the shell performs, in order. */
export type ProcessAction =
  /**
   * Report what the gone process held (its turn, prompts, unread messages); with `restarting`, keep
   * the messages no model call took for the process that follows instead.
   */
  | { readonly kind: 'report_exit'; readonly restarting: boolean }
  /** Keep these exits and this flag (durably: the snapshot) and forget the process record. */
  | { readonly kind: 'save_exits'; readonly exits: readonly number[]; readonly crashLoop: boolean }
  /** Tell the operator restarts stopped: `exits` exits within `windowMs`. */
  | { readonly kind: 'report_crash_loop'; readonly exits: number; readonly windowMs: number }
  /** The crash loop is lifted (durably): exits forgotten, restarts on. */
  | { readonly kind: 'lift_crash_loop' }
  /** Start a new process now, if a slot allows (without one, the next message resumes it). */
  | { readonly kind: 'start' }
  /** The running turn has been silent for `silentMs`: tell the chat it may be stuck. */
  | { readonly kind: 'report_stuck'; readonly silentMs: number };

/** One step: the next state, the actions in order, and when to send the next `tick`. */
export interface ProcessStep {
  readonly state: ProcessState;
  readonly actions: readonly ProcessAction[];
  /** Absolute time of the next wake-up, or `undefined` when nothing is due. */
  readonly wakeAt: number | undefined;
}

/** Applies one event. */
export function processStep(policy: ProcessPolicy, state: ProcessState, event: ProcessEvent): ProcessStep {
  const actions: ProcessAction[] = [];
  let next = state;
  switch (event.kind) {
    case 'checked':
      next = stuckCheck(policy, { ...state, running: event.running }, event.at, actions);
      break;
    case 'tick':
      if (state.restartAt !== undefined && event.at >= state.restartAt) {
        next = { ...state, restartAt: undefined };
        if (!state.stopped) actions.push({ kind: 'start' });
      }
      next = stuckCheck(policy, next, event.at, actions);
      break;
    case 'exited': {
      const exits = [...state.exits.filter((at) => event.at - at < policy.crashLoop.windowMs), event.at];
      const crashLoop = exits.length > policy.crashLoop.maxExits;
      const restarting = policy.restartOnExit && !crashLoop && !state.stopped;
      actions.push({ kind: 'report_exit', restarting }, { kind: 'save_exits', exits, crashLoop });
      if (crashLoop) {
        actions.push({ kind: 'report_crash_loop', exits: exits.length, windowMs: policy.crashLoop.windowMs });
      }
      next = {
        ...state,
        exits,
        crashLoop,
        running: false,
        restartAt: restarting ? event.at + backoffMs(exits.length) : undefined,
      };
      break;
    }
    case 'activity':
      next = { ...state, lastActivityAt: event.at, stuckReported: false };
      break;
    case 'started':
      next = {
        ...state,
        restartAt: undefined,
        running: false,
        lastActivityAt: event.at,
        stuckReported: false,
      };
      break;
    case 'asked':
      if (state.crashLoop) {
        actions.push({ kind: 'lift_crash_loop' });
        next = { ...state, exits: [], crashLoop: false };
      }
      break;
    case 'stopped':
      next = { ...state, stopped: true, restartAt: undefined };
      break;
    default:
      return event satisfies never;
  }
  return { state: next, actions, wakeAt: processWake(policy, next) };
}

/** Reports the silence once it is longer than the limit. */
function stuckCheck(
  policy: ProcessPolicy,
  state: ProcessState,
  now: number,
  actions: ProcessAction[],
): ProcessState {
  const silentMs = now - state.lastActivityAt;
  if (!state.running || state.stuckReported || silentMs <= policy.stuckAfterMs) return state;
  actions.push({ kind: 'report_stuck', silentMs });
  return { ...state, stuckReported: true };
}

/** The restart's time, or the moment the running turn's silence passes the limit, whichever is first. */
function processWake(policy: ProcessPolicy, state: ProcessState): number | undefined {
  const stuckAt =
    state.running && !state.stuckReported ? state.lastActivityAt + policy.stuckAfterMs + 1 : undefined;
  if (state.restartAt === undefined) return stuckAt;
  return stuckAt === undefined ? state.restartAt : Math.min(stuckAt, state.restartAt);
}

// --- the conversations that failed ---------------------------------------------------------------------

/** A conversation that failed to open or to be served, until it works again. */
export interface Failure {
  /** Failures in a row. */
  readonly failures: number;
  /** Not tried again before this (ms). */
  readonly retryAt: number;
  /** What went wrong last, for the chat and `/status`. */
  readonly reason: string;
  /** A `retry` was asked for; its outcome (`opened` or `failed`) is not in yet. */
  readonly retrying?: boolean;
}

/** The failing conversations, by key. Steps return a new map when anything changed. */
export type Failures = ReadonlyMap<string, Failure>;

/** What happened to the failing conversations, at `at` where time matters. */
export type FailureEvent =
  /** `key`'s opening, a frame of it or a read of its output threw. */
  | { readonly kind: 'failed'; readonly key: string; readonly reason: string; readonly at: number }
  /** `key` was opened or served: it works again. */
  | { readonly kind: 'opened'; readonly key: string }
  /**
   * The wake-up came. `busy`: conversations opened anyway by other means (open already, or a frame of
   * theirs waits to be served): they are not retried here.
   */
  | { readonly kind: 'tick'; readonly at: number; readonly busy: ReadonlySet<string> };

/** What the pool performs. */
export type FailureAction =
  /** The first failure of a run: tell `key`'s chat, once. */
  | { readonly kind: 'report'; readonly key: string; readonly reason: string; readonly retryInMs: number }
  /** Past its backoff: open `key` again, then report `opened` or `failed`. */
  | { readonly kind: 'retry'; readonly key: string };

/** One step of the failures: the next map, the actions, and when to send the next `tick`. */
export interface FailureStep {
  readonly failures: Failures;
  readonly actions: readonly FailureAction[];
  /** Absolute time of the next retry due, or `undefined` when none is. */
  readonly wakeAt: number | undefined;
}

/** Applies one event. */
export function failureStep(failures: Failures, event: FailureEvent): FailureStep {
  const actions: FailureAction[] = [];
  let next = failures;
  switch (event.kind) {
    case 'failed': {
      const previous = failures.get(event.key);
      const count = (previous?.failures ?? 0) + 1;
      const retryInMs = backoffMs(count);
      next = new Map(failures).set(event.key, {
        failures: count,
        retryAt: event.at + retryInMs,
        reason: event.reason,
      });
      if (previous === undefined)
        actions.push({ kind: 'report', key: event.key, reason: event.reason, retryInMs });
      break;
    }
    case 'opened':
      if (failures.has(event.key)) {
        const copy = new Map(failures);
        copy.delete(event.key);
        next = copy;
      }
      break;
    case 'tick': {
      for (const [key, failure] of failures) {
        if (failure.retrying || event.at < failure.retryAt || event.busy.has(key)) continue;
        if (next === failures) next = new Map(failures);
        (next as Map<string, Failure>).set(key, { ...failure, retrying: true });
        actions.push({ kind: 'retry', key });
      }
      break;
    }
    default:
      return event satisfies never;
  }
  return { failures: next, actions, wakeAt: failureWake(next, event.kind === 'tick' ? event.at : undefined) };
}

/** The conversations still backing off at `now`: their frames wait, whatever the slots. */
export function blockedAt(failures: Failures, now: number): ReadonlySet<string> {
  return new Set([...failures].filter(([, f]) => now < f.retryAt).map(([key]) => key));
}

/**
 * The earliest retry to come. One being retried waits for its outcome; after a tick at `ticked`, one due
 * by then is busy (its own frames open it) and asks for no wake-up, so a busy conversation never makes the
 * pool spin.
 */
function failureWake(failures: Failures, ticked: number | undefined): number | undefined {
  let at: number | undefined;
  for (const failure of failures.values()) {
    if (failure.retrying || (ticked !== undefined && failure.retryAt <= ticked)) continue;
    if (at === undefined || failure.retryAt < at) at = failure.retryAt;
  }
  return at;
}
