/**
 * `stdout.log` stays bounded on disk: the hole rule on its own, the trimmer on a real file, and the
 * bridge as a real process reading 200,000 lines from one CLI (`fake-claude-flood.mjs`) while it is
 * killed with SIGKILL after holes were punched and adopts the CLI again at its recorded offset.
 */
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  holeToPunch,
  STDOUT_KEEP_BYTES,
  StdoutTrimmer,
} from '../../packages/agent-bridge/src/io/process/stdout-trim.js';
import { readSnapshot } from '../../packages/agent-bridge/src/io/session/snapshot.js';
import { type BridgeProcess, buildBridge, duplicates, startBridge } from './bridge-process.js';
import { createRig, type Rig, userMessage } from './harness.js';

const MiB = 1024 * 1024;
const FAKE = join(import.meta.dirname, 'fake-claude-flood.mjs');
const quiet = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return quiet;
  },
};

/** Bytes the file occupies on disk (what a full disk is made of), not its logical size. */
const allocated = (path: string): number => statSync(path).blocks * 512;

describe('holeToPunch', () => {
  it('waits until a whole keepBytes can be freed, keeps keepBytes before the recorded offset', () => {
    expect(holeToPunch(0, 0, MiB)).toBeUndefined();
    expect(holeToPunch(2 * MiB - 1, 0, MiB)).toBeUndefined();
    expect(holeToPunch(2 * MiB, 0, MiB)).toEqual({ offset: 0, length: MiB });
    // Block-aligned end, never past recorded − keep.
    expect(holeToPunch(2 * MiB + 5000, 0, MiB)).toEqual({ offset: 0, length: MiB + 4096 });
    // Continues from the last hole, and only once another keepBytes is freeable.
    expect(holeToPunch(3 * MiB - 1, MiB, MiB)).toBeUndefined();
    expect(holeToPunch(3 * MiB, MiB, MiB)).toEqual({ offset: MiB, length: MiB });
  });
});

describe('StdoutTrimmer', () => {
  let rig: Rig | undefined;
  afterAll(async () => rig?.cleanup());

  it('frees handled bytes on disk, keeps the size, the recent tail and everything after the offset', async () => {
    rig = await createRig([]);
    const path = join(rig.root, 'log');
    const line = `${'x'.repeat(127)}\n`;
    writeFileSync(path, line.repeat((20 * MiB) / 128));
    const trimmer = new StdoutTrimmer({ path, keepBytes: MiB, log: quiet });
    for (let recorded = 0; recorded <= 16 * MiB; recorded += 100_000) trimmer.recorded(recorded);
    expect(statSync(path).size).toBe(20 * MiB);
    // Not before 16 MiB − keep; bounded by 2 × keep before the offset.
    expect(allocated(path)).toBeLessThanOrEqual(4 * MiB + 2 * MiB + 4096);
    expect(allocated(path)).toBeGreaterThanOrEqual(4 * MiB + MiB);
    const fd = openSync(path, 'r');
    const buf = Buffer.alloc(128);
    readSync(fd, buf, 0, 128, 0);
    expect(buf.every((b) => b === 0)).toBe(true);
    readSync(fd, buf, 0, 128, 16 * MiB - 128);
    expect(buf.toString()).toBe(line);
    closeSync(fd);
    // A new process truncated the log: holes start again from 0 (had the trimmer kept its old end, it
    // would punch nothing below 15 MiB).
    writeFileSync(path, line.repeat((4 * MiB) / 128));
    trimmer.recorded(3 * MiB);
    expect(allocated(path)).toBeGreaterThanOrEqual(2 * MiB);
    expect(allocated(path)).toBeLessThanOrEqual(2 * MiB + 4096);
  });

  it('a failing punch is said once and then left alone', () => {
    const warnings: string[] = [];
    let calls = 0;
    const trimmer = new StdoutTrimmer({
      path: '/nonexistent',
      keepBytes: MiB,
      log: { ...quiet, warn: (_fields: unknown, msg: string) => warnings.push(msg) },
      punch: () => {
        calls += 1;
        throw new Error('fallocate: not supported');
      },
    });
    trimmer.recorded(4 * MiB);
    trimmer.recorded(8 * MiB);
    expect(calls).toBe(1);
    expect(warnings).toHaveLength(1);
  });
});

describe('stdout.log under a flood, across a bridge restart', () => {
  let rig: Rig;
  let bridge: BridgeProcess | undefined;

  beforeAll(async () => {
    buildBridge();
    rig = await createRig([]);
  }, 120_000);

  afterAll(async () => {
    await bridge?.kill();
    await rig?.cleanup();
  });

  it('200,000 lines through one process: allocated stays under its bound, kill -9 after a punch resumes at the offset', async () => {
    // 200 batches 25 ms apart: turn 1 streams for 5 s at least, so the kill lands inside it even when
    // the machine is loaded (the bridge reads behind the writer).
    const options = {
      bridge: {
        claudeBin: FAKE,
        env: { ...rig.env, FLOOD_LINES: '100000', FLOOD_BATCH: '500', FLOOD_PAUSE_MS: '25' },
      },
    };
    bridge = await startBridge(rig, options);
    await rig.send(userMessage('in-1', 'first'));
    const dir = join(rig.stateDir, 'conversations', 'c42');
    const log = join(dir, 'stdout.log');

    // Bound while a bridge reads: 2 × keep + a block, plus what was written after the recorded offset
    // (the snapshot is written at most every 250 ms: a few MB at this rate on a loaded machine).
    const bound = 2 * STDOUT_KEEP_BYTES + 4096 + 8 * MiB;
    let peak = 0;
    let sampling = true;
    const sample = setInterval(() => {
      if (sampling) {
        try {
          peak = Math.max(peak, allocated(log));
        } catch {
          // not created yet
        }
      }
    }, 20);
    try {
      // Kill once a hole has been punched (allocated well under the size) while turn 1 still streams.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const st = statSync(log, { throwIfNoEntry: false });
        if (st && st.size - st.blocks * 512 > STDOUT_KEEP_BYTES) break;
        if (Date.now() > deadline) throw new Error('no hole was punched within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(rig.of('turn_ended')).toHaveLength(0);
      sampling = false;
      await bridge.kill();
      const recorded = readSnapshot(join(dir, 'bridge.json'))?.stdoutOffset ?? 0;
      // The recorded offset is past the hole, and the bytes there are real: the next bridge reads a line.
      const fd = openSync(log, 'r');
      const head = Buffer.alloc(4096);
      readSync(fd, head, 0, 4096, 0);
      const at = Buffer.alloc(1);
      readSync(fd, at, 0, 1, recorded);
      closeSync(fd);
      expect(head.every((b) => b === 0)).toBe(true);
      expect(recorded).toBeGreaterThan(STDOUT_KEEP_BYTES);
      expect(at.toString()).toBe('{');

      // While no bridge reads, the backlog grows (bounded by nothing here); it is read on adoption.
      bridge = await startBridge(rig, options);
      const first = await rig.waitFor((f) => f.type === 'turn_ended', 120_000);
      expect(first).toMatchObject({ outcome: 'success' });
      sampling = true;
      const since = rig.frames.length;
      await rig.send(userMessage('in-2', 'second'));
      await rig.waitFor((f) => f.type === 'turn_ended', 120_000, since);
    } finally {
      clearInterval(sample);
    }
    const texts = rig.of('text').map((f) => f.text);
    expect(texts).toEqual(['answer 1', 'answer 2']);
    expect(rig.of('turn_started')).toHaveLength(2);
    expect(duplicates(rig.frames)).toEqual([]);
    const size = statSync(log).size;
    expect(size).toBeGreaterThan(40 * MiB);
    expect(peak).toBeLessThan(bound);
    expect(allocated(log)).toBeLessThan(bound);
    console.log(
      `stdout.log: ${(size / MiB).toFixed(1)} MiB written, peak allocated ${(peak / MiB).toFixed(1)} MiB, now ${(allocated(log) / MiB).toFixed(1)} MiB`,
    );
  }, 240_000);
});
