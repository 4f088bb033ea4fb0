/**
 * The pool's waiting queue on disk: the frames that wait for a process slot (or for their failed
 * conversation's backoff), in arrival order, in `waiting.json` in the bridge's state directory. Replaced
 * whole on every change (`atomic-file.ts`), and durable before the frames it adds are acknowledged, so a
 * bridge killed at any moment finds every frame it took and did not serve.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from './atomic-file.js';
import type { StartingFrame } from './core/pool.js';

/** The file's name in the state directory. */
export const WAITING_FILE = 'waiting.json';

/** The frames the file holds (none when there is no file). Throws if it is there but unreadable. */
export function loadWaitingFile(path: string): StartingFrame[] {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as StartingFrame[]) : [];
}

/** Replaces the file's frames with `waiting`; durable on return. */
export function saveWaitingFile(path: string, waiting: readonly StartingFrame[]): void {
  writeFileAtomic(path, JSON.stringify(waiting));
}
