/**
 * The one pacing model (`core/telegram/pace-windows.ts`) as tables: a window lets a burst through at once and
 * holds the next call until the oldest leaves; a reserve keeps slots for more urgent calls; the
 * gateway's windows sit under Telegram's published limits by the margins they state.
 */
import { describe, expect, it } from 'vitest';
import {
  GATEWAY_WINDOWS,
  TELEGRAM_LIMITS,
  tightened,
  windowDelay,
} from '../../src/core/telegram/pace-windows.js';

describe('sliding windows', () => {
  it.each<[string, number[], number, number, number]>([
    // name, call times, now, reserve, expected delay
    ['empty', [], 0, 0, 0],
    ['a burst under the limit', [0, 0, 0], 0, 0, 0],
    ['the limit reached', [0, 1, 2, 3], 10, 0, 990],
    ['the oldest left already', [0, 1, 2, 3], 1000, 0, 0],
    ['a reserve of two: waits for the third oldest', [0, 100, 200, 300], 400, 2, 800],
    ['a reserve never blocks for good', [0], 10, 9, 990],
  ])('%s', (_, times, now, reserve, delay) => {
    expect(windowDelay(times, [{ limit: 4, periodMs: 1000 }], now, reserve)).toBe(delay);
  });

  it('a group can take its four answers at once; twenty in a minute stay under Telegram’s limit', () => {
    const [group] = GATEWAY_WINDOWS.group;
    expect(windowDelay([0, 0, 0], GATEWAY_WINDOWS.group, 0)).toBe(0);
    expect(group.limit).toBeLessThan(TELEGRAM_LIMITS.group.limit);
    expect(group.periodMs).toBeGreaterThan(TELEGRAM_LIMITS.group.periodMs);
    expect(GATEWAY_WINDOWS.reaction[0].limit).toBeLessThan(TELEGRAM_LIMITS.reaction.limit);
  });

  it('a chat tightened after a 429 keeps at least one call per window', () => {
    expect(
      tightened(
        [
          { limit: 3, periodMs: 3300 },
          { limit: 1, periodMs: 10 },
        ],
        2,
      ),
    ).toEqual([
      { limit: 1, periodMs: 3300 },
      { limit: 1, periodMs: 10 },
    ]);
  });
});
