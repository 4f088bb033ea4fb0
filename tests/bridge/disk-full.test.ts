/**
 * The bridge's files on a filesystem that fills up (a 2 MiB tmpfs): a write that fails for want of
 * space leaves no temp file behind, the outbox stays usable after a compaction that could not be
 * written, and every frame it had appended is still there once space is back. Needs `mount` (root);
 * skipped cleanly where it is not permitted.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../packages/agent-bridge/src/io/outbox/atomic-file.js';
import { FileChannelStore } from '../../packages/agent-bridge/src/io/outbox/outbox.js';

const frame = (i: number) => ({ type: 'text' as const, turnId: 't', blockId: `b${i}`, text: `chunk ${i}` });

let dir = '';
let mounted = false;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sy-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'ignore' });
    mounted = true;
  } catch {
    mounted = false;
  }
});
afterAll(() => {
  // Lazily, so that a failed test's open descriptor cannot keep the mount.
  if (mounted) execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
});

/** Fills the filesystem with one file; returns a function that frees it again. */
function fill(): () => void {
  const ballast = path.join(dir, 'ballast');
  const fd = openSync(ballast, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  // The last bytes too: whatever a partial chunk left.
  try {
    for (;;) writeSync(fd, chunk.subarray(0, 512));
  } catch {
    // full
  }
  closeSync(fd);
  return () => rmSync(ballast, { force: true });
}

describe.skipIf(process.platform !== 'linux')('bridge files on a full disk', () => {
  it('leaves no temp file when an atomic write runs out of space', (context) => {
    if (!mounted) return context.skip();
    const target = path.join(dir, 'atomic', 'record.json');
    execFileSync('mkdir', ['-p', path.dirname(target)]);
    writeFileAtomic(target, '{"old":true}');
    const free = fill();
    try {
      expect(() => writeFileAtomic(target, 'x'.repeat(256 * 1024))).toThrow(/ENOSPC/);
      expect(readdirSync(path.dirname(target))).toEqual(['record.json']);
    } finally {
      free();
    }
  });

  it('keeps the outbox writable after a compaction that could not be written, and loses no frame', (context) => {
    if (!mounted) return context.skip();
    const logPath = path.join(dir, 'outbox.log');
    const store = new FileChannelStore(logPath);
    for (let i = 1; i <= 20; i++) store.append(frame(i));
    store.acknowledge(5);
    const free = fill();
    try {
      expect(() => store.compact()).toThrow(/ENOSPC/);
      expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    } catch (err) {
      store.close();
      throw err;
    } finally {
      free();
    }
    // Space is back: the same store appends and compacts on its own descriptor.
    expect(store.append(frame(21))).toBe(21);
    store.compact();
    expect(store.append(frame(22))).toBe(22);
    store.close();
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const reopened = new FileChannelStore(logPath);
    expect(reopened.pendingAfter(0).map((p) => p.seq)).toEqual(Array.from({ length: 17 }, (_, i) => i + 6));
    reopened.close();
  });
});
