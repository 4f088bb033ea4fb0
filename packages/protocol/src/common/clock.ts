/**
 * Time, as one small interface: what time it is, timers, and sleeping. Every module of the gateway, the
 * bridge and the protocol that reads the time or waits takes a {@link Clock} (default
 * {@link systemClock}), so that a test can drive it with a {@link ManualClock} instead of waiting.
 *
 * Contract shared by both clocks:
 * - `now()` is milliseconds since the epoch and never goes backwards.
 * - A timer runs once, no earlier than `ms` after it was set (a negative or NaN `ms` counts as 0);
 *   timers due at the same moment run in the order they were set.
 * - `clearTimeout` of a timer that has run or was cleared, or of `undefined`, does nothing.
 * - A pending system timer keeps the process alive, as Node's do: whoever sets one clears it on stop.
 */

/** An armed timer, to pass back to {@link Clock.clearTimeout}. Opaque: only its clock reads it. */
export interface TimerHandle {
  readonly __timerHandle: unique symbol;
}

/** The time source and timers a module uses; see the file's header for the contract. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `run` once, `ms` from now. */
  setTimeout(run: () => void, ms: number): TimerHandle;
  /** Cancels a timer that has not run yet. */
  clearTimeout(handle: TimerHandle | undefined): void;
  /** Resolves `ms` from now; rejects with the signal's reason if it is (or becomes) aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Node's clock: `Date.now()` and the global timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, delayOf(ms)) as unknown as TimerHandle,
  clearTimeout: (handle) => {
    if (handle !== undefined) clearTimeout(handle as unknown as NodeJS.Timeout);
  },
  sleep: (ms, signal) => sleepOn(systemClock, ms, signal),
};

/** One pending timer of a {@link ManualClock}. */
interface ManualTimer {
  due: number;
  order: number;
  run: () => void;
}

/**
 * A clock that moves only when told to: for tests. `advance(ms)` runs every timer that falls due within
 * the step, earliest first (ties in the order they were set), with `now()` reading each timer's due
 * time while it runs; timers set while advancing run in the same step when they fall due in it.
 */
export class ManualClock implements Clock {
  #now: number;
  #order = 0;
  readonly #timers = new Map<number, ManualTimer>();

  /** Starts at `start` ms since the epoch (default 0). */
  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(run: () => void, ms: number): TimerHandle {
    const order = ++this.#order;
    this.#timers.set(order, { due: this.#now + delayOf(ms), order, run });
    return order as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle !== undefined) this.#timers.delete(handle as unknown as number);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers set and not yet run or cleared. */
  get pending(): number {
    return this.#timers.size;
  }

  /** When the earliest pending timer is due, or `undefined` when none is pending. */
  get nextDue(): number | undefined {
    return this.#next(Number.POSITIVE_INFINITY)?.due;
  }

  /** Moves time forward by `ms`, running the timers that fall due on the way (synchronously). */
  advance(ms: number): void {
    const target = this.#now + delayOf(ms);
    for (let timer = this.#next(target); timer; timer = this.#next(target)) {
      this.#timers.delete(timer.order);
      this.#now = timer.due;
      timer.run();
    }
    this.#now = target;
  }

  /**
   * Like {@link advance}, but lets promise callbacks run after each timer, so code that awaits
   * `sleep` (or a chain of promises a timer starts) gets to continue within the step.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#now + delayOf(ms);
    await settle();
    for (let timer = this.#next(target); timer; timer = this.#next(target)) {
      this.#timers.delete(timer.order);
      this.#now = timer.due;
      timer.run();
      await settle();
    }
    this.#now = target;
  }

  #next(limit: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const timer of this.#timers.values()) {
      if (timer.due > limit) continue;
      if (!best || timer.due < best.due || (timer.due === best.due && timer.order < best.order)) best = timer;
    }
    return best;
  }
}

/** A timer's delay as both clocks read it: at least 0. */
function delayOf(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** `sleep` in terms of a clock's own timers. */
function sleepOn(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Lets pending promise callbacks (and what they schedule in turn) run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
