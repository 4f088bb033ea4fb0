/**
 * The process policy, as pure rules: what an exit of a conversation's Claude process leads to (a
 * restart after a backoff, or a crash loop that waits for a person), when a silent turn is reported as
 * stuck, and when a conversation that failed to open or to be served is tried again.
 *
 * - **Exits.** An exit is counted with the exits of the last `crashLoop.windowMs`; more than
 *   `crashLoop.maxExits` of them is a crash loop: no restart until a person asks again (a message). Else,
 *   with `restartOnExit`, the process is restarted after {@link backoffMs} of the recent exits.
 * - **Backoff.** 500 ms, doubling per recent failure, at most 30 s: the same curve for exits and for
 *   conversation failures.
 * - **Stuck watchdog.** A running turn silent (no output, no input) for more than `stuckAfterMs` is
 *   reported once per silence.
 * - **Conversation failures.** A conversation whose opening or serving threw is blocked until its retry
 *   time; each failure in a row doubles the wait; it is reported in its own chat the first time only,
 *   so a failure that persists does not flood the chat.
 *
 * Time is the caller's `now` (ms); nothing here reads a clock or does I/O.
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

/** What an exit leads to. */
export interface ExitVerdict {
  /** The exits to keep (those within the window, this one last). */
  exits: number[];
  /** More than `maxExits` within the window: no restart until a person asks. */
  crashLoop: boolean;
  /** A new process follows (what the session machine keeps for it), after `restartInMs`. */
  restarting: boolean;
  /** When `restarting`: the backoff before the new process starts. */
  restartInMs?: number;
}

/** Decides what the exit at `now` leads to; `stopped` when the conversation is being stopped. */
export function exitVerdict(
  policy: ProcessPolicy,
  pastExits: readonly number[],
  now: number,
  stopped: boolean,
): ExitVerdict {
  const exits = [...pastExits.filter((at) => now - at < policy.crashLoop.windowMs), now];
  const crashLoop = exits.length > policy.crashLoop.maxExits;
  const restarting = policy.restartOnExit && !crashLoop && !stopped;
  return restarting
    ? { exits, crashLoop, restarting, restartInMs: backoffMs(exits.length) }
    : { exits, crashLoop, restarting };
}

/** What the stuck watchdog knows. */
export interface Watch {
  /** A turn is running. */
  running: boolean;
  /** The last stdout line read or input written (ms). */
  lastActivityAt: number;
  /** This silence was reported already. */
  reported: boolean;
}

/** Whether to report the turn as stuck at `now`, and for how long it has been silent. */
export function stuckVerdict(
  policy: ProcessPolicy,
  watch: Watch,
  now: number,
): { silentMs: number } | undefined {
  const silentMs = now - watch.lastActivityAt;
  return watch.running && !watch.reported && silentMs > policy.stuckAfterMs ? { silentMs } : undefined;
}

/** A conversation that failed to open or to be served, until it works again. */
export interface Failure {
  /** Failures in a row. */
  failures: number;
  /** Not tried again before this (ms). */
  retryAt: number;
  /** What went wrong last, for the chat and `/status`. */
  reason: string;
}

/**
 * The conversation failed at `now` (again, when `previous` is set): when to try it next, and whether to
 * tell its chat (`report`: the first failure of a run only).
 */
export function conversationFailed(
  previous: Failure | undefined,
  reason: string,
  now: number,
): { failure: Failure; report: boolean } {
  const failures = (previous?.failures ?? 0) + 1;
  return {
    failure: { failures, retryAt: now + backoffMs(failures), reason },
    report: previous === undefined,
  };
}

/** Whether a failed conversation may be tried again at `now`. */
export function mayRetry(failure: Failure | undefined, now: number): boolean {
  return failure === undefined || now >= failure.retryAt;
}
