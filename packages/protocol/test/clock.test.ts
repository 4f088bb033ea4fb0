import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../src/common/clock.js';

describe('ManualClock', () => {
  it('runs due timers earliest first, ties in the order they were set, with now() at each due time', () => {
    const clock = new ManualClock(1000);
    const seen: string[] = [];
    clock.setTimeout(() => seen.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => seen.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => seen.push(`c@${clock.now()}`), 20);
    clock.setTimeout(() => seen.push(`late@${clock.now()}`), 31);
    clock.advance(30);
    expect(seen).toEqual(['a@1010', 'b@1020', 'c@1020']);
    expect(clock.now()).toBe(1030);
    expect(clock.pending).toBe(1);
    expect(clock.nextDue).toBe(1031);
  });

  it('does not run a timer before its time, and runs a zero or negative delay at the next advance', () => {
    const clock = new ManualClock();
    let runs = 0;
    clock.setTimeout(() => runs++, 5);
    clock.advance(4);
    expect(runs).toBe(0);
    clock.setTimeout(() => runs++, -3);
    clock.setTimeout(() => runs++, Number.NaN);
    clock.advance(0);
    expect(runs).toBe(2);
    clock.advance(1);
    expect(runs).toBe(3);
  });

  it('runs timers set while advancing within the same step when they fall due in it', () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    const every10 = (): void => {
      seen.push(clock.now());
      clock.setTimeout(every10, 10);
    };
    clock.setTimeout(every10, 10);
    clock.advance(35);
    expect(seen).toEqual([10, 20, 30]);
    expect(clock.nextDue).toBe(40);
  });

  it('never runs a cleared timer; clearing twice or clearing undefined is harmless', () => {
    const clock = new ManualClock();
    let runs = 0;
    const handle = clock.setTimeout(() => runs++, 10);
    clock.clearTimeout(handle);
    clock.clearTimeout(handle);
    clock.clearTimeout(undefined);
    clock.advance(100);
    expect(runs).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('resolves sleep when its time comes, and lets awaiting code continue within advanceAsync', async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(100);
        seen.push(clock.now());
      }
    })();
    await clock.advanceAsync(250);
    expect(seen).toEqual([100, 200]);
    await clock.advanceAsync(50);
    await loop;
    expect(seen).toEqual([100, 200, 300]);
  });

  it('rejects sleep with the abort reason and drops its timer', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1000, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(sleeping).rejects.toThrow('stopped');
    expect(clock.pending).toBe(0);
    const already = clock.sleep(10, controller.signal);
    await expect(already).rejects.toThrow('stopped');
  });
});

describe('systemClock', () => {
  it('sleeps on real time and cancels a cleared timer', async () => {
    const start = systemClock.now();
    let ran = false;
    const handle = systemClock.setTimeout(() => {
      ran = true;
    }, 5);
    systemClock.clearTimeout(handle);
    await systemClock.sleep(20);
    expect(systemClock.now() - start).toBeGreaterThanOrEqual(15);
    expect(ran).toBe(false);
  });
});
