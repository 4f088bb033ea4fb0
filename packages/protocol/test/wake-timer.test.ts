/** The shells' one wake-up timer (`wake-timer.ts`) on a manual clock. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/common/clock.js';
import { createWakeTimer } from '../src/common/wake-timer.js';

describe('wake timer', () => {
  it('keeps the earliest wake-up, moves to an earlier one, and fires once with the time it fires at', () => {
    const clock = new ManualClock(1000);
    const woke: number[] = [];
    const timer = createWakeTimer(clock, (now) => woke.push(now));
    timer.arm(1500);
    timer.arm(1800); // later: the armed one stays
    timer.arm(undefined); // nothing new: the armed one stays
    clock.advance(400);
    expect(woke).toEqual([]);
    timer.arm(1200); // earlier than the armed 1500, and already past: fires at once
    clock.advance(0);
    expect(woke).toEqual([1400]);
    clock.advance(1000);
    expect(woke).toEqual([1400]); // the 1500 one was replaced, not kept beside it
    expect(clock.pending).toBe(0);
  });

  it('arms nothing after stop, and stop clears what was armed', () => {
    const clock = new ManualClock(0);
    const woke: number[] = [];
    const timer = createWakeTimer(clock, (now) => woke.push(now));
    timer.arm(100);
    timer.stop();
    timer.arm(50);
    clock.advance(1000);
    expect(woke).toEqual([]);
    expect(clock.pending).toBe(0);
  });
});
