/**
 * The local day a moment falls in, in an IANA time zone: its date (`YYYY-MM-DD`), when it started and
 * when the next one starts (epoch ms), with DST handled (a day is 23, 24 or 25 hours long), and how a
 * moment reads there. Pure functions of their arguments (`Intl` only, no clock): the budgets' "today".
 */

/** One local day. */
export interface LocalDay {
  /** `YYYY-MM-DD` in the zone. */
  day: string;
  /** When it started (epoch ms). */
  start: number;
  /** When the next day starts (epoch ms): when a daily budget resets. */
  end: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** Whether `timeZone` is a zone this runtime knows (`UTC`, `Europe/Berlin`, …). */
export function knownTimeZone(timeZone: string): boolean {
  try {
    formatIn(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock fields of `at` in the zone. */
function wall(
  at: number,
  timeZone: string,
): { y: number; m: number; d: number; h: number; mi: number; s: number } {
  const parts = Object.fromEntries(
    formatIn(timeZone)
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return {
    y: Number(parts.year),
    m: Number(parts.month),
    d: Number(parts.day),
    h: Number(parts.hour),
    mi: Number(parts.minute),
    s: Number(parts.second),
  };
}

/** How far the zone's wall clock is ahead of UTC at `at` (ms). */
function offsetAt(at: number, timeZone: string): number {
  const w = wall(at, timeZone);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.mi, w.s) - (at - (((at % 1000) + 1000) % 1000));
}

/** The first moment of the local date y-m-d (the day's midnight, or the first hour after a DST gap). */
function startOf(y: number, m: number, d: number, timeZone: string): number {
  const midnightUtc = Date.UTC(y, m - 1, d);
  // Two passes: the offset at the guess may differ from the offset at the true start across a change.
  let guess = midnightUtc - offsetAt(midnightUtc, timeZone);
  guess = midnightUtc - offsetAt(guess, timeZone);
  const w = wall(guess, timeZone);
  // Midnight fell in a DST gap: the day starts at the first hour that exists.
  if (w.d !== d) guess += 3_600_000 - ((w.mi * 60 + w.s) * 1000 || 0);
  return guess;
}

/** The local day `at` falls in, in `timeZone`. */
export function localDay(at: number, timeZone: string): LocalDay {
  const w = wall(at, timeZone);
  const start = startOf(w.y, w.m, w.d, timeZone);
  const next = new Date(Date.UTC(w.y, w.m - 1, w.d + 1));
  const end = startOf(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone);
  const day = `${w.y}-${String(w.m).padStart(2, '0')}-${String(w.d).padStart(2, '0')}`;
  return { day, start, end };
}

/** `at` as the zone's wall clock: `YYYY-MM-DD HH:MM (zone)`. */
export function localTimeText(at: number, timeZone: string): string {
  const w = wall(at, timeZone);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${w.y}-${two(w.m)}-${two(w.d)} ${two(w.h)}:${two(w.mi)} (${timeZone})`;
}
