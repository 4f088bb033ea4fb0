/** Cron patterns through croner (`io/automation/cron.ts`): fields, time zones, DST, and the errors. */
import { describe, expect, it } from 'vitest';
import { cronDue, cronProblem, dueIso, timezoneProblem } from '../../src/io/automation/cron.js';

const at = (iso: string): number => Date.parse(iso);
const next = (pattern: string, timezone: string | undefined, from: string, n: number): string[] => {
  const due = cronDue(pattern, timezone);
  const out: string[] = [];
  for (let t: number | undefined = at(from); out.length < n; ) {
    t = due(t);
    if (t === undefined) break;
    out.push(dueIso(t));
  }
  return out;
};

describe('cron', () => {
  it('five fields are minute-first, in the schedule time zone', () => {
    expect(next('0 9 * * 1-5', 'America/New_York', '2026-12-04T00:00:00Z', 2)).toEqual([
      '2026-12-04T14:00:00Z', // Friday 09:00 EST
      '2026-12-07T14:00:00Z', // Monday
    ]);
  });

  it('six fields are second-first; the next due time is strictly after the given one', () => {
    expect(next('*/10 * * * * *', undefined, '2026-12-01T09:00:00Z', 3)).toEqual([
      '2026-12-01T09:00:10Z',
      '2026-12-01T09:00:20Z',
      '2026-12-01T09:00:30Z',
    ]);
  });

  it('a fixed time inside the spring-forward gap runs once after it; an autumn repeat runs once', () => {
    // Europe/Berlin: 2026-03-29 02:00 → 03:00; 2026-10-25 03:00 → 02:00.
    expect(next('30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', 2)).toEqual([
      '2026-03-29T01:00:00Z', // 03:00 CEST, the first valid time after the gap
      '2026-03-30T00:30:00Z',
    ]);
    expect(next('30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', 2)).toEqual([
      '2026-10-25T00:30:00Z', // 02:30 CEST, once
      '2026-10-26T01:30:00Z',
    ]);
  });

  it('a bad pattern or time zone is named with what to write instead', () => {
    expect(cronProblem('0 9 * *')).toMatch(/expected five fields .* or six with seconds first/);
    expect(cronProblem('0 25 * * *')).toBeDefined();
    expect(cronProblem('0 9 * * 1-5', 'Mars/Olympus')).toMatch(/unknown time zone "Mars\/Olympus"/);
    expect(cronProblem('0 9 * * 1-5', 'Europe/Berlin')).toBeUndefined();
    expect(timezoneProblem('UTC')).toBeUndefined();
  });

  it('due times are named ISO 8601 with seconds, UTC', () => {
    expect(dueIso(Date.UTC(2026, 11, 1, 9, 0, 0, 250))).toBe('2026-12-01T09:00:00Z');
  });
});
