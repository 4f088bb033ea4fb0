/**
 * Cron patterns and time zones, through croner (well kept, no dependencies, time zones and DST from the
 * platform's Intl data): five fields (minute first), or six with seconds first; day-of-month and
 * day-of-week combine as classic cron does (either matches). A pattern is only ever evaluated here, as
 * a pure "next due time after" function: croner arms no timer unless given a callback, and none is.
 *
 * DST, as croner does it: a fixed-time pattern ("30 2 * * *") due in a spring-forward gap runs at the
 * first valid time after the gap and once on an autumn repeat; an interval pattern ("*\/10 * * * *")
 * skips the gap's times and runs on both occurrences of a repeated time.
 */
import { Cron } from 'croner';

/** The first due time strictly after `afterMs` (Unix ms), or `undefined` when none is left. */
export type NextDue = (afterMs: number) => number | undefined;

const OPTIONS = { mode: '5-or-6-parts', paused: true } as const;

/** Why `pattern` (in `timezone`, UTC when absent) is no cron pattern this gateway runs, or undefined. */
export function cronProblem(pattern: string, timezone?: string): string | undefined {
  const zone = timezoneProblem(timezone);
  if (zone !== undefined) return zone;
  try {
    new Cron(pattern, { ...OPTIONS, ...(timezone !== undefined ? { timezone } : {}) });
    return undefined;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return `${why}: expected five fields (minute hour day-of-month month day-of-week, like "0 9 * * 1-5") or six with seconds first (like "*/10 * * * * *")`;
  }
}

/** Why `timezone` is no IANA time zone name, or undefined (undefined itself means UTC). */
export function timezoneProblem(timezone: string | undefined): string | undefined {
  if (timezone === undefined) return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return undefined;
  } catch {
    return `unknown time zone "${timezone}": expected an IANA name like Europe/Berlin, America/New_York or UTC`;
  }
}

/** The due times of a valid `pattern` in `timezone` (UTC when absent); see {@link cronProblem}. */
export function cronDue(pattern: string, timezone?: string): NextDue {
  const cron = new Cron(pattern, { ...OPTIONS, timezone: timezone ?? 'UTC' });
  return (afterMs) => cron.nextRun(new Date(afterMs))?.getTime() ?? undefined;
}

/** The due time of a one-off schedule at `atMs`: due once, if still ahead. */
export function onceDue(atMs: number): NextDue {
  return (afterMs) => (atMs > afterMs ? atMs : undefined);
}

/** A due time as runs name it: ISO 8601 with seconds, UTC (`2026-12-01T09:00:00Z`). */
export function dueIso(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
