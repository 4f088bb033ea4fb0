/**
 * The worker's retention of its exchange (`io/files/exchange-sweep.ts`): a bridge on another host
 * deletes the attachments it received once older than `days`, at start and then daily, as the gateway
 * does with its own; younger files stay.
 */
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createExchangeSweep } from '../src/io/files/exchange-sweep.js';

const DAY = 24 * 3600_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A file in `dir` last written `daysAgo` days before `now`. */
function fileAged(dir: string, name: string, now: number, daysAgo: number): string {
  const path = join(dir, name);
  writeFileSync(path, name);
  const at = (now - daysAgo * DAY) / 1000;
  utimesSync(path, at, at);
  return path;
}

describe("the worker's exchange sweep", () => {
  it('deletes received files past retention at start and then daily, keeping younger ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-sweep-'));
    dirs.push(dir);
    const clock = new ManualClock(Date.now());
    const old = fileAged(dir, 'in-1-old.pdf', clock.now(), 8);
    const part = fileAged(dir, 'in-2-cut.pdf.part', clock.now(), 9);
    const young = fileAged(dir, 'in-3-young.pdf', clock.now(), 6.5);
    const sweep = createExchangeSweep({ dir, days: 7, clock, log: silentLogger });
    expect(await sweep.start()).toBe(2);
    expect([existsSync(old), existsSync(part), existsSync(young)]).toEqual([false, false, true]);
    // A day on, the young one is past retention too.
    await clock.advanceAsync(DAY);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(young)).toBe(false);
    await sweep.stop();
    expect(clock.pending).toBe(0);
  });

  it('starts on a missing directory without failing the bridge', async () => {
    const clock = new ManualClock(Date.now());
    const sweep = createExchangeSweep({
      dir: join(tmpdir(), 'sy-sweep-none', 'files'),
      days: 7,
      clock,
      log: silentLogger,
    });
    expect(await sweep.start()).toBe(0);
    await sweep.stop();
  });
});
