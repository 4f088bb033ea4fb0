/**
 * How a foreground `switchyard` command ends: the first SIGINT or SIGTERM starts an orderly stop.
 *
 * One Ctrl-C often arrives more than once: the terminal signals the whole process group, and runners
 * such as `pnpm start` or `npx` forward the signal to their child as well. Signals within
 * `echoWindowMs` of the first are therefore the same request and are ignored; a later one is the user
 * insisting, and exits at once with status 130 (what a shell reports for an interrupt).
 */

/** How {@link untilStopSignal} behaves; the defaults suit an interactive command. */
export interface StopSignalOptions {
  /** Signals this soon after the first are echoes of it. Default 1000 ms. */
  echoWindowMs?: number;
  /** Called once with the signal that started the stop (e.g. to say "stopping…"). */
  onSignal?(signal: NodeJS.Signals): void;
  /** What happens on an insisting signal. Default `process.exit(130)`. */
  exit?(code: number): void;
}

/**
 * Resolves once a stop signal has arrived and `stop` has settled (a failed stop is reported through
 * the returned promise's rejection). The handlers stay installed until then, so no signal kills the
 * process half-way through its stop.
 */
export function untilStopSignal(stop: () => Promise<void>, options: StopSignalOptions = {}): Promise<void> {
  const echoWindowMs = options.echoWindowMs ?? 1000;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  return new Promise((resolve, reject) => {
    let firstAt: number | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      const now = performance.now();
      if (firstAt !== undefined) {
        if (now - firstAt > echoWindowMs) exit(130);
        return;
      }
      firstAt = now;
      options.onSignal?.(signal);
      stop().then(done(resolve), (err: unknown) => done(() => reject(err))());
    };
    const done = (settle: () => void) => () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      settle();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
