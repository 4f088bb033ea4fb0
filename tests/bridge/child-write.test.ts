/**
 * Writing into a CLI's stdin never blocks the event loop: a line larger than the pipe, written while the
 * reader is busy, returns at once; the rest goes out from a timer, in order with the lines after it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChildHandle, spawnChild } from '../../packages/agent-bridge/src/io/process/child.js';

let dir: string | undefined;
let handle: ChildHandle | undefined;
afterEach(async () => {
  await handle?.terminate(500);
  handle?.detach();
  handle = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('stdin writes', () => {
  it('a line larger than the pipe, while the reader sleeps, neither blocks nor reorders', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-write-'));
    const out = join(dir, 'out.txt');
    // A stand-in CLI that reads nothing for a second, then copies its stdin to a file.
    handle = spawnChild({
      stateDir: dir,
      workDir: dir,
      bin: '/bin/sh',
      args: ['-c', `sleep 1; cat > ${out}`],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    }).handle;
    const big = 'x'.repeat(300 * 1024);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const started = performance.now();
    handle.writeLine(big);
    handle.writeLine('after');
    const took = performance.now() - started;
    expect(took).toBeLessThan(100);
    const deadline = Date.now() + 10_000;
    let text = '';
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      try {
        text = readFileSync(out, 'utf8');
      } catch {
        // not created yet
      }
      if (text.endsWith('after\n')) break;
    }
    clearInterval(ticker);
    expect(text).toBe(`${big}\nafter\n`);
    // The event loop ran all along (a blocking write would have stopped the ticker for the second).
    expect(ticks).toBeGreaterThan(50);
  });
});

describe('detach', () => {
  it('finishes a line half in the pipe without blocking the event loop', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-detach-'));
    const out = join(dir, 'out.txt');
    // A stand-in CLI that reads nothing for a second, then copies its stdin to a file.
    const child = spawnChild({
      stateDir: dir,
      workDir: dir,
      bin: '/bin/sh',
      args: ['-c', `sleep 1; cat > ${out}`],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    }).handle;
    handle = child;
    const big = 'y'.repeat(300 * 1024);
    child.writeLine(big);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    // The pipe holds 64 KB and nobody reads for a second: detach waits for room to finish the line.
    await child.detach();
    clearInterval(ticker);
    // A wait that blocked the event loop (Atomics.wait) would have stopped the ticker all that second.
    expect(ticks).toBeGreaterThan(50);
    const deadline = Date.now() + 10_000;
    let text = '';
    while (Date.now() < deadline && !text.endsWith('\n')) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      try {
        text = readFileSync(out, 'utf8');
      } catch {
        // not created yet
      }
    }
    // The same guarantee as before: the whole line reached the reader before this side let go.
    expect(text).toBe(`${big}\n`);
  });
});
