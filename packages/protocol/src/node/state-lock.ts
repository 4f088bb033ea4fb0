/**
 * The exclusive lock a service holds on its state directory while it runs, so that a second copy of it
 * (a second sandbox, gateway, bridge or `run` on the same directory) refuses before it touches anything.
 *
 * The lock is a file, `switchyard.lock`, naming its holder: pid, the start time of that pid (field 22 of
 * `/proc/<pid>/stat`, so a reused pid is not taken for the holder) and what it is. It is created whole and
 * at once (written to a private temporary file, then `link()`ed into place, which fails if the lock
 * exists), so a reader never sees a half-written lock. A lock whose holder is gone (killed, crashed,
 * power lost) is stale: the next service removes it and takes the directory. Nothing needs to run at exit
 * for that to work, and no native module is needed (Node has no `flock`).
 *
 * Contract:
 * - At most one live holder per directory. The one window: two services that find the same stale lock
 *   within the few microseconds between one's re-read and its unlink. Both then race for the `link()`
 *   and only one wins; the other refuses.
 * - A holder that cannot be checked (`/proc` unreadable for a reason other than "no such process") is
 *   taken as alive: refusing wrongly is recoverable, two services on one directory are not.
 * - `release()` removes the lock only while it is still this holder's.
 *
 * Linux only, like the services (it reads `/proc`).
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Clock, systemClock } from '../common/clock.js';

/** The lock file's name inside the directory it guards. */
export const STATE_LOCK_FILE = 'switchyard.lock';

/** Who holds a state directory, as its lock file says. */
export interface LockHolder {
  pid: number;
  /** Field 22 of `/proc/<pid>/stat` when the lock was taken. */
  startTime: string;
  /** What the holder is: "gateway", "bridge", "sandbox", "run". */
  service: string;
  /** Milliseconds since the epoch when it took the lock. */
  since: number;
  /** Distinguishes two locks taken by one process. */
  token: string;
}

/** A lock this process holds. */
export interface StateLock {
  readonly file: string;
  readonly holder: LockHolder;
  /** Gives the directory up; idempotent, and a no-op once the lock is no longer this holder's. */
  release(): void;
}

/** The lock was taken, or who has it and a sentence that says what to do. */
export type LockOutcome =
  | { ok: true; lock: StateLock }
  | { ok: false; holder: LockHolder; file: string; message: string };

/** Reads a process's start time, or says why not. */
export function readStartTime(
  pid: number,
): { ok: true; startTime: string; zombie: boolean } | { ok: false; missing: boolean } {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    return { ok: false, missing: (err as NodeJS.ErrnoException).code === 'ENOENT' };
  }
  // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTime = fields[19];
  if (startTime === undefined) return { ok: false, missing: false };
  return { ok: true, startTime, zombie: state === 'Z' || state === 'X' };
}

/**
 * Takes the exclusive lock on `dir` (created if missing) for `service`, or reports the live holder.
 * Call it before anything else touches the directory. `clock` stamps the lock's `since`.
 */
export function lockStateDir(
  dir: string,
  service: string,
  clock: Pick<Clock, 'now'> = systemClock,
): LockOutcome {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, STATE_LOCK_FILE);
  const self = readStartTime(process.pid);
  const holder: LockHolder = {
    pid: process.pid,
    startTime: self.ok ? self.startTime : 'unknown',
    service,
    since: clock.now(),
    token: randomBytes(8).toString('hex'),
  };
  const body = `${JSON.stringify(holder)}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createWhole(file, body)) return { ok: true, lock: heldLock(file, holder, body) };
    const seen = readLock(file);
    if (seen === undefined) continue; // removed meanwhile: try again
    if (seen.holder && holderAlive(seen.holder)) return refusal(file, seen.holder);
    // Stale (holder gone, or a file that is not a lock): remove it only if it is still the one read.
    if (readLock(file)?.raw === seen.raw) removeQuietly(file);
  }
  const last = readLock(file)?.holder;
  if (last) return refusal(file, last);
  throw new Error(`cannot take the lock ${file}: it keeps changing; is another service starting there?`);
}

/** Who holds `dir` right now, if anyone alive does (for status and for a tool that must not race it). */
export function stateLockHolder(dir: string): LockHolder | undefined {
  const seen = readLock(path.join(dir, STATE_LOCK_FILE));
  return seen?.holder && holderAlive(seen.holder) ? seen.holder : undefined;
}

function refusal(file: string, holder: LockHolder): LockOutcome {
  const dir = path.dirname(file);
  const who = holder.pid === process.pid ? 'this process' : `pid ${holder.pid}`;
  return {
    ok: false,
    holder,
    file,
    message:
      `${dir} is in use by a running ${holder.service} (${who}, since ${new Date(holder.since).toISOString()}); ` +
      `nothing was changed. Stop that one first (kill ${holder.pid}), or use another directory.`,
  };
}

/** Creates `file` with `body`, complete, unless it exists. */
function createWhole(file: string, body: string): boolean {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, body, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    removeQuietly(temporary);
  }
}

function readLock(file: string): { raw: string; holder: LockHolder | undefined } | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return { raw, holder: parseHolder(raw) };
}

function parseHolder(raw: string): LockHolder | undefined {
  try {
    const value = JSON.parse(raw) as Partial<LockHolder>;
    if (typeof value.pid !== 'number' || typeof value.startTime !== 'string') return undefined;
    return {
      pid: value.pid,
      startTime: value.startTime,
      service: typeof value.service === 'string' ? value.service : 'service',
      since: typeof value.since === 'number' ? value.since : 0,
      token: typeof value.token === 'string' ? value.token : '',
    };
  } catch {
    return undefined;
  }
}

function holderAlive(holder: LockHolder): boolean {
  const found = readStartTime(holder.pid);
  if (!found.ok) return !found.missing;
  if (found.zombie) return false;
  return holder.startTime === 'unknown' || found.startTime === holder.startTime;
}

function heldLock(file: string, holder: LockHolder, body: string): StateLock {
  let released = false;
  return {
    file,
    holder,
    release() {
      if (released) return;
      released = true;
      if (readLock(file)?.raw === body) removeQuietly(file);
    },
  };
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
