import { describe, expect, it } from 'vitest';
import { knownTimeZone, localDay, localTimeText } from '../../src/io/spend/local-day.js';

const at = (iso: string) => Date.parse(iso);

describe('the local day (the budgets’ “today”)', () => {
  it.each([
    [
      'UTC, midday',
      '2026-12-01T12:00:00Z',
      'UTC',
      '2026-12-01',
      '2026-12-01T00:00:00.000Z',
      '2026-12-02T00:00:00.000Z',
    ],
    [
      'UTC, the day’s first ms',
      '2026-12-01T00:00:00Z',
      'UTC',
      '2026-12-01',
      '2026-12-01T00:00:00.000Z',
      '2026-12-02T00:00:00.000Z',
    ],
    [
      'Berlin in winter (UTC+1), before UTC midnight',
      '2026-12-01T23:30:00Z',
      'Europe/Berlin',
      '2026-12-02',
      '2026-12-01T23:00:00.000Z',
      '2026-12-02T23:00:00.000Z',
    ],
    [
      'New York (UTC-5), evening',
      '2026-12-02T03:00:00Z',
      'America/New_York',
      '2026-12-01',
      '2026-12-01T05:00:00.000Z',
      '2026-12-02T05:00:00.000Z',
    ],
    [
      'Berlin, the 23-hour day of the spring change',
      '2026-03-29T12:00:00Z',
      'Europe/Berlin',
      '2026-03-29',
      '2026-03-28T23:00:00.000Z',
      '2026-03-29T22:00:00.000Z',
    ],
    [
      'Berlin, the 25-hour day of the autumn change',
      '2026-10-25T12:00:00Z',
      'Europe/Berlin',
      '2026-10-25',
      '2026-10-24T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
    ],
    [
      'Santiago, where midnight is skipped in spring',
      '2026-09-06T12:00:00Z',
      'America/Santiago',
      '2026-09-06',
      '2026-09-06T04:00:00.000Z',
      '2026-09-07T03:00:00.000Z',
    ],
  ])('%s', (_what, now, zone, day, start, end) => {
    const d = localDay(at(now), zone);
    expect({
      day: d.day,
      start: new Date(d.start).toISOString(),
      end: new Date(d.end).toISOString(),
    }).toEqual({
      day,
      start,
      end,
    });
  });

  it('reads a moment as the zone’s wall clock, and knows which zones exist', () => {
    expect(localTimeText(at('2026-12-01T23:00:00Z'), 'Europe/Berlin')).toBe(
      '2026-12-02 00:00 (Europe/Berlin)',
    );
    expect([knownTimeZone('UTC'), knownTimeZone('Europe/Berlin'), knownTimeZone('Mars/Olympus')]).toEqual([
      true,
      true,
      false,
    ]);
  });
});
