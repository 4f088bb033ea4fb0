/**
 * One service per state directory: a second lock on a held directory is refused with the holder's pid
 * and leaves the holder's lock in place; a lock whose process is gone (or whose pid now belongs to
 * another process) is taken over; a released lock frees the directory.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { ManualClock } from '../src/common/clock.js';
import { lockStateDir, readStartTime, STATE_LOCK_FILE, stateLockHolder } from '../src/node/state-lock.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sy-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lockFile = () => join(dir, STATE_LOCK_FILE);

test('a second lock on a held directory is refused, names the holder pid, and changes nothing', () => {
  const first = lockStateDir(dir, 'gateway');
  if (!first.ok) throw new Error(first.message);
  const before = readFileSync(lockFile(), 'utf8');
  const second = lockStateDir(dir, 'gateway');
  expect(second.ok).toBe(false);
  if (second.ok) return;
  expect(second.holder.pid).toBe(process.pid);
  expect(second.message).toContain('running gateway');
  expect(second.message).toContain(`kill ${process.pid}`);
  expect(readFileSync(lockFile(), 'utf8')).toBe(before);
  expect(stateLockHolder(dir)?.service).toBe('gateway');
  first.lock.release();
});

test('a released lock frees the directory, and a second release does not remove a new holder', () => {
  const first = lockStateDir(dir, 'bridge');
  if (!first.ok) throw new Error(first.message);
  first.lock.release();
  expect(stateLockHolder(dir)).toBeUndefined();
  const again = lockStateDir(dir, 'bridge');
  expect(again.ok).toBe(true);
  first.lock.release();
  expect(stateLockHolder(dir)?.service).toBe('bridge');
  if (again.ok) again.lock.release();
});

test('a lock left by a process that is gone is stale and taken over', () => {
  // Pid numbers above the kernel's pid_max (at most 2^22) never run.
  writeFileSync(
    lockFile(),
    JSON.stringify({ pid: 4_194_305, startTime: '1', service: 'sandbox', since: 0, token: 'x' }),
  );
  expect(stateLockHolder(dir)).toBeUndefined();
  const taken = lockStateDir(dir, 'sandbox');
  expect(taken.ok).toBe(true);
  if (taken.ok) expect(taken.lock.holder.pid).toBe(process.pid);
});

test('a lock whose pid was reused by another process (another start time) is stale', () => {
  const self = readStartTime(process.pid);
  expect(self.ok).toBe(true);
  writeFileSync(
    lockFile(),
    JSON.stringify({ pid: process.pid, startTime: 'not-this-one', service: 'run', since: 0, token: 'x' }),
  );
  expect(lockStateDir(dir, 'run').ok).toBe(true);
});

test('a lock file that is not a lock (hand-edited, truncated) is stale', () => {
  writeFileSync(lockFile(), '');
  expect(lockStateDir(dir, 'gateway').ok).toBe(true);
});

test('the lock’s `since` comes from the clock the service passes', () => {
  const taken = lockStateDir(dir, 'bridge', new ManualClock(42_000));
  if (!taken.ok) throw new Error(taken.message);
  expect(JSON.parse(readFileSync(lockFile(), 'utf8')).since).toBe(42_000);
  taken.lock.release();
});
