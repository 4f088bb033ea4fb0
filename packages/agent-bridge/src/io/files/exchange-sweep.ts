/**
 * The worker's share of the retention rule (issue 29): a bridge on another host keeps the attachments it
 * received over the protocol in its own exchange directory, which the gateway's retention never sees.
 * This sweep applies the same rule there: files older than `days` (the agent's `retention.days`) are
 * deleted at start and then once a day, as the gateway deletes its own (protocol's `deleteOlderFiles`).
 *
 * The bridge's copies of files the agent sends are deleted once Telegram has them (`file-outbox.ts`);
 * one older than `days` is the gateway's rule too: locally its retention sweeps the same directory.
 */
import {
  type Clock,
  deleteOlderFiles,
  describeError,
  type Logger,
  type TimerHandle,
} from '@switchyard/protocol';

const DAY_MS = 24 * 3600_000;

/** Options of {@link createExchangeSweep}. */
export interface ExchangeSweepOptions {
  /** The bridge's exchange directory. */
  dir: string;
  /** Age in days (fractions allowed) after which a file is deleted. */
  days: number;
  /** How often a pass runs after the first; default a day. */
  everyMs?: number;
  clock: Clock;
  log: Logger;
}

/** The sweep's handle: `start` runs a pass and arms the next; `stop` waits for one running. */
export interface ExchangeSweep {
  start(): Promise<number>;
  stop(): Promise<void>;
}

/** Creates the sweep; nothing runs until `start`. */
export function createExchangeSweep(options: ExchangeSweepOptions): ExchangeSweep {
  const { clock, log } = options;
  let timer: TimerHandle | undefined;
  let stopped = false;
  let running: Promise<number> | undefined;
  const pass = (): Promise<number> => {
    running ??= deleteOlderFiles(options.dir, clock.now() - options.days * DAY_MS)
      .then((files) => {
        log.info({ event: 'exchange_sweep', files }, 'deleted exchange files past retention');
        return files;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const arm = (): void => {
    if (stopped) return;
    timer = clock.setTimeout(() => {
      pass()
        .catch((err: unknown) =>
          log.error({ event: 'exchange_sweep_failed', err: describeError(err) }, 'exchange sweep failed'),
        )
        .finally(arm);
    }, options.everyMs ?? DAY_MS);
  };
  return {
    /** Resolves with the files the first pass deleted; a pass that fails is logged, never thrown. */
    async start() {
      stopped = false;
      const files = await pass().catch((err: unknown) => {
        log.error({ event: 'exchange_sweep_failed', err: describeError(err) }, 'exchange sweep failed');
        return 0;
      });
      arm();
      return files;
    },
    async stop() {
      stopped = true;
      clock.clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
