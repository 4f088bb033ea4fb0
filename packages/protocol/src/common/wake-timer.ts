/**
 * The one timer of a shell whose pure core says when it next needs waking (the card cadence, the turn
 * machine): `arm(at)` keeps a timer already due no later than `at` — its wake-up re-arms for what comes
 * after — and otherwise moves the timer to `at`; `arm(undefined)` keeps what is armed. After `stop`
 * nothing is armed again.
 */
import type { Clock, TimerHandle } from './clock.js';

/** See the module comment. */
export interface WakeTimer {
  arm(at: number | undefined): void;
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
  return {
    arm(at) {
      if (stopped || at === undefined) return;
      if (timer !== undefined && wakeAt !== undefined && wakeAt <= at) return;
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
    },
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
      timer = undefined;
      wakeAt = undefined;
    },
  };
}
