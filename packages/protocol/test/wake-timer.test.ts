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

describe('wake timer: set, cancel, and a period', () => {
  it('set moves the wake-up later as well as earlier, and set(undefined) leaves nothing armed', () => {
    const clock = new ManualClock(0);
    const woke: number[] = [];
    const timer = createWakeTimer(clock, (now) => woke.push(now));
    timer.set(100);
    timer.set(300); // later: arm would keep 100; set moves it
    clock.advance(200);
    expect(woke).toEqual([]);
    clock.advance(100);
    expect(woke).toEqual([300]);
    timer.set(400);
    timer.set(undefined);
    clock.advance(1000);
    expect(woke).toEqual([300]);
    expect(clock.pending).toBe(0);
  });

  it('set to the time already armed keeps the timer it has (re-armed only when the time moves)', () => {
    const clock = new ManualClock(0);
    let armed = 0;
    const counting = {
      now: () => clock.now(),
      clearTimeout: clock.clearTimeout.bind(clock),
      setTimeout: (fn: () => void, ms: number) => {
        armed += 1;
        return clock.setTimeout(fn, ms);
      },
    };
    const timer = createWakeTimer(counting, () => {});
    timer.set(100);
    clock.advance(50);
    timer.set(100);
    expect(armed).toBe(1);
    timer.set(120);
    expect(armed).toBe(2);
  });

  it('cancel clears what is armed and may be armed again; stop may not', () => {
    const clock = new ManualClock(0);
    const woke: number[] = [];
    const timer = createWakeTimer(clock, (now) => woke.push(now));
    timer.arm(100);
    timer.cancel();
    clock.advance(200);
    expect(woke).toEqual([]);
    timer.arm(300);
    clock.advance(100);
    expect(woke).toEqual([300]);
    timer.stop();
    timer.set(400);
    clock.advance(1000);
    expect(woke).toEqual([300]);
  });

  it('runs on a period when its wake-up arms the next one', () => {
    const clock = new ManualClock(0);
    const woke: number[] = [];
    const timer = createWakeTimer(clock, (now) => {
      woke.push(now);
      timer.arm(now + 100);
    });
    timer.arm(100);
    clock.advance(350);
    expect(woke).toEqual([100, 200, 300]);
    timer.stop();
    clock.advance(1000);
    expect(woke).toEqual([100, 200, 300]);
  });
});
