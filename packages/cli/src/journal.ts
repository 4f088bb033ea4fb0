/**
 * Log lines for journald: pino's JSON with the syslog priority prefix (`<3>{"level":50,…}`) that
 * journald reads from a service's stdout (`SyslogLevelPrefix=`, on by default) and strips, so that
 * `journalctl -p err -u 'switchyard-*'` finds errors. Chosen by `SWITCHYARD_LOG_FORMAT=journal`, or
 * when unset by systemd's `$JOURNAL_STREAM` (set when stdout is the journal); `json` turns it off.
 */
import { pino } from 'pino';

/** pino level → syslog priority (3 err, 4 warning, 6 info, 7 debug; fatal is 2, crit). */
export const JOURNAL_PRIORITY = { trace: 7, debug: 7, info: 6, warn: 4, error: 3, fatal: 2 } as const;

/** Whether log lines should carry journald priority prefixes in `env`. */
export function wantsJournal(env: Record<string, string | undefined>): boolean {
  const format = env.SWITCHYARD_LOG_FORMAT;
  return format === 'journal' || (!format && Boolean(env.JOURNAL_STREAM));
}

/**
 * A pino destination writing each line to `out` with its level's priority prefix: one stream per level
 * in a deduplicating multistream, so a line goes to the stream of its own level only.
 */
export function journalDestination(out: { write(chunk: string): unknown } = process.stdout) {
  const levels = Object.keys(JOURNAL_PRIORITY) as Array<keyof typeof JOURNAL_PRIORITY>;
  return pino.multistream(
    levels.map((level) => ({
      level,
      stream: { write: (line: string) => out.write(`<${JOURNAL_PRIORITY[level]}>${line}`) },
    })),
    { dedupe: true },
  );
}
