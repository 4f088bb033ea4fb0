/**
 * One retention rule for what the gateway keeps of people's messages: finished SQLite rows and the files
 * in the exchange directory (attachments users sent, and copies of files the agent sent) are deleted
 * once older than `days` (default 7), at start and then once a day. A file still waited on is never
 * deleted, whatever its age: an attachment of an inbound message still in the inbox (the bridge will
 * hand its path to Claude), a file of a `file_send` not yet uploaded.
 *
 * The budgets' spend rows go in the same pass, on their own horizon (`SPEND_KEPT_MS`, 35 days): they
 * are what today's budget and the month's cost count, so a shorter `days` must not take them.
 *
 * Age of a file is its mtime (set when it was written or copied, before the rename into place); a
 * `.part` left by a crash mid-write is deleted by the same rule. The bridge deletes its own copies once
 * Telegram has them; what a crash left behind is swept here.
 */
import {
  type Clock,
  createWakeTimer,
  deleteOlderFiles,
  type Logger,
  systemClock,
} from '@switchyard/protocol';
import type { Forgotten, GatewayStore } from '../../store/store.js';
import { SPEND_KEPT_MS } from '../spend/spend-ledger.js';

/** The default age after which finished rows and attachments are deleted. */
export const DEFAULT_RETENTION_DAYS = 7;

const DAY_MS = 24 * 3600_000;

/** Options of {@link createRetention}. */
export interface RetentionOptions {
  store: Pick<GatewayStore, 'forgetFinishedBefore' | 'filesInUse' | 'forgetSpendBefore'>;
  /** The directories swept (their files, not below): the exchange directory. */
  dirs: readonly string[];
  /** Age in days (fractions allowed) after which things are deleted; default {@link DEFAULT_RETENTION_DAYS}. */
  days?: number;
  /** How often a pass runs after the first; default a day. */
  everyMs?: number;
  /** Time for the rows' age and the daily pass; default the system clock. */
  clock?: Clock;
  logger: Logger;
}

/** What one pass deleted. */
export interface RetentionReport extends Forgotten {
  files: number;
  /** Spend rows and budget notices past {@link SPEND_KEPT_MS} (their own horizon, not `days`). */
  spend: number;
}

/** The retention handle: `start` runs a pass and schedules the next; `stop` waits for one running. */
export interface Retention {
  start(): Promise<RetentionReport>;
  /** One pass now. */
  run(): Promise<RetentionReport>;
  stop(): Promise<void>;
}

/** Creates the gateway's retention; nothing runs until `start`. */
export function createRetention(options: RetentionOptions): Retention {
  const clock = options.clock ?? systemClock;
  const now = (): number => clock.now();
  const ageMs = (options.days ?? DEFAULT_RETENTION_DAYS) * DAY_MS;
  const log = options.logger;
  let running: Promise<RetentionReport> | undefined;
  /** Between `stop` and the next `start`: a pass that ends then arms no next one. */
  let stopped = false;

  const pass = async (): Promise<RetentionReport> => {
    const before = now() - ageMs;
    const forgotten = options.store.forgetFinishedBefore(before);
    const spend = options.store.forgetSpendBefore(now() - SPEND_KEPT_MS);
    let files = 0;
    for (const dir of options.dirs)
      files += await deleteOlderFiles(dir, before, () => options.store.filesInUse());
    const report = { ...forgotten, files, spend };
    log.info({ event: 'retention', ...report }, 'deleted finished rows and attachments past retention');
    return report;
  };

  const run = (): Promise<RetentionReport> => {
    running ??= pass().finally(() => {
      running = undefined;
    });
    return running;
  };

  const every = options.everyMs ?? DAY_MS;
  /** The daily pass: the next is armed once this one has ended, so two never overlap. */
  const wake = createWakeTimer(clock, () => {
    run()
      .catch((err: unknown) =>
        log.error({ event: 'retention_failed', err: (err as Error).message }, 'retention pass failed'),
      )
      .finally(() => {
        if (!stopped) wake.arm(now() + every);
      });
  });

  return {
    async start() {
      stopped = false;
      wake.cancel();
      const report = await run();
      if (!stopped) wake.arm(now() + every);
      return report;
    },
    run,
    async stop() {
      stopped = true;
      wake.cancel();
      await running?.catch(() => {});
    },
  };
}
