/**
 * A real stop of the recorded Claude process, without a gateway and without reading its output: what
 * `switchyard stop-claude AGENT` and the dev supervisor's Ctrl-C call.
 *
 * Contract: call it while no bridge runs on `stateDir` (or after `bridge.stop('restart')`). A running
 * bridge would see the exit as a crash and, with `restartOnExit`, start a new process. The record is
 * cleared only once the process is proven gone, so a later bridge never adopts a dead pid's successor
 * and never starts a second CLI next to a live one.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describeError, type Logger, silentLogger } from '@switchyard/protocol';
import { readSnapshot, SNAPSHOT_FILE, type Snapshot, writeSnapshot } from '../session/snapshot.js';
import { adoptChild, type ChildRecord, liveness } from './child.js';

/** Options of {@link stopRecordedClaude}. */
export interface StopRecordedClaudeOptions {
  /** The bridge's state directory (the one holding `bridge.json`). */
  stateDir: string;
  /** SIGTERM → SIGKILL grace (default 5000 ms). */
  graceMs?: number;
  logger?: Logger;
}

/**
 * Stops the Claude process recorded in `stateDir`: SIGTERM to its process group, up to `graceMs` for it
 * to exit, then SIGKILL; then clears the record.
 *
 * - `stopped`: it was running and is gone now.
 * - `not_running`: nothing was recorded, or the recorded process had already exited (record cleared).
 * - `unknown`: whether it runs cannot be told (`/proc` unreadable) or the state could not be read;
 *   nothing was signalled and the record is kept.
 */
export async function stopRecordedClaude(
  options: StopRecordedClaudeOptions,
): Promise<'stopped' | 'not_running' | 'unknown'> {
  const log = (options.logger ?? silentLogger).child({ component: 'stop-claude' });
  const path = join(options.stateDir, SNAPSHOT_FILE);
  let snapshot: Snapshot | undefined;
  try {
    snapshot = readSnapshot(path);
  } catch (err) {
    log.error({ err: describeError(err), path }, 'cannot read the bridge state; not signalling anything');
    return 'unknown';
  }
  if (!snapshot) return 'not_running';
  const record = snapshot.child;
  if (!record) return 'not_running';
  const state = liveness(record);
  if (state === 'unknown') {
    log.warn({ pid: record.pid }, 'cannot tell whether the Claude process is alive; not signalling it');
    return 'unknown';
  }
  if (state === 'alive') {
    const handle = adoptChild(options.stateDir, record);
    await handle.terminate(options.graceMs ?? 5000);
    await handle.detach();
    log.info({ pid: record.pid }, 'stopped the Claude process');
  }
  delete snapshot.child;
  writeSnapshot(path, snapshot);
  return state === 'alive' ? 'stopped' : 'not_running';
}

/**
 * Stops every Claude process recorded under a bridge's state directory: each conversation's
 * (`conversations/<dir>/bridge.json`) and a single-session record from before conversations. Same
 * contract as {@link stopRecordedClaude}; the result is the least certain of all: `unknown` if any
 * was, else `stopped` if any was running, else `not_running`.
 */
export async function stopAllRecordedClaude(
  options: StopRecordedClaudeOptions,
): Promise<'stopped' | 'not_running' | 'unknown'> {
  const dirs = sessionDirs(options.stateDir);
  const results = await Promise.all(dirs.map((stateDir) => stopRecordedClaude({ ...options, stateDir })));
  if (results.includes('unknown')) return 'unknown';
  return results.includes('stopped') ? 'stopped' : 'not_running';
}

/** The directories under a bridge's state directory that may hold a session record (`bridge.json`). */
function sessionDirs(stateDir: string): string[] {
  const root = join(stateDir, 'conversations');
  const dirs = [stateDir];
  if (existsSync(root)) for (const name of readdirSync(root)) dirs.push(join(root, name));
  return dirs;
}

/**
 * Every Claude process recorded under a bridge's state directory (live or not): the directory of its
 * session and its record. For operators' tools and tests; reads only, and skips unreadable snapshots.
 */
export function recordedProcesses(stateDir: string): { dir: string; record: ChildRecord }[] {
  const found: { dir: string; record: ChildRecord }[] = [];
  for (const dir of sessionDirs(stateDir)) {
    try {
      const record = readSnapshot(join(dir, SNAPSHOT_FILE))?.child;
      if (record) found.push({ dir, record });
    } catch {
      // being rewritten, or not ours to read
    }
  }
  return found;
}
