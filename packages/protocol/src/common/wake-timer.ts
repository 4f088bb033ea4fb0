/**
 * The one timer of a shell whose pure core says when it next needs waking (the card cadence, the turn
 * machine, a reply), or that wakes itself on a period (alerts, retention) or once, at a deadline (a
 * transcription). Three ways to say when, on one armed timer:
 *
 * - `arm(at)` keeps a timer already due no later than `at` — its wake-up re-arms for what comes after —
 *   and otherwise moves the timer to `at`; `arm(undefined)` keeps what is armed. For a core that is
 *   woken at the earliest of many times and asked again.
 * - `set(at)` makes `at` the one wake-up, earlier or later than the armed one; `set(undefined)` leaves
 *   nothing armed. The timer is re-armed only when `at` moves. For a core whose every step says its
 *   next wake-up exactly, so that a step wanting none (a reply in flight) is not woken early.
 * - `cancel()` leaves nothing armed; the timer may be armed again (a shell that is started again).
 *
 * After `stop` nothing is armed again. A periodic shell re-arms from its wake-up: `arm(now + every)`.
 */
import type { Clock, TimerHandle } from './clock.js';

/** See the module comment. */
export interface WakeTimer {
  /** Wakes at `at` unless a wake-up no later than it is armed; undefined keeps what is armed. */
  arm(at: number | undefined): void;
  /** Wakes at exactly `at` (the armed wake-up moved, earlier or later); undefined: nothing armed. */
  set(at: number | undefined): void;
  /** Nothing armed, until the next `arm` or `set`. */
  cancel(): void;
  /** Nothing armed, now or later. */
  stop(): void;
}

/** A wake timer on `clock` that calls `wake` with the time it fires at. */
export function createWakeTimer(
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>,
  wake: (now: number) => void,
): WakeTimer {
  let timer: TimerHandle | undefined;
  let wakeAt: number | undefined;
  let stopped = false;
  const cancel = (): void => {
    clock.clearTimeout(timer);
    timer = undefined;
    wakeAt = undefined;
  };
  const moveTo = (at: number): void => {
    clock.clearTimeout(timer);
    wakeAt = at;
    timer = clock.setTimeout(
      () => {
        timer = undefined;
        wakeAt = undefined;
        wake(clock.now());
      },
      Math.max(0, at - clock.now()),
    );
  };
  return {
    arm(at) {
      if (stopped || at === undefined) return;
      if (timer !== undefined && wakeAt !== undefined && wakeAt <= at) return;
      moveTo(at);
    },
    set(at) {
      if (stopped || at === wakeAt) return;
      if (at === undefined) cancel();
      else moveTo(at);
    },
    cancel,
    stop() {
      stopped = true;
      cancel();
    },
  };
}
