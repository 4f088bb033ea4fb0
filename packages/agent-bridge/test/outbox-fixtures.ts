/**
 * What the outbox tests share: temporary directories on tmpfs where there is one (these tests cut
 * files, they do not measure fsync, and run thousands), removed after each test, and small frames to
 * tell records apart. Not a test file itself.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameOf } from '@switchyard/protocol';
import { afterEach } from 'vitest';
import type { FileChannelStore } from '../src/io/outbox/outbox.js';

const dirs: string[] = [];
const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/** A fresh directory, removed when the test ends. */
export const tempDir = (prefix = 'sy-o-'): string => {
  const dir = mkdtempSync(join(base, prefix));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A frame known by its text. */
export const frame = (name: string): FrameOf<'thinking'> => ({ type: 'thinking', turnId: 't', text: name });

/** The store's pending frames as `[seq, text]`. */
export const texts = (store: FileChannelStore): (string | number)[][] =>
  store.pendingAfter(0).map((p) => [p.seq, (p.frame as FrameOf<'thinking'>).text]);
