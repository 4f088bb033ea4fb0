/**
 * Frames the bridge took from the gateway and still owes work, kept on disk in its state directory so a
 * bridge killed at any moment finds them: the pool's waiting queue (`waiting.json`: frames that wait for
 * a process slot, or for their failed conversation's backoff, in arrival order) and the handoffs waiting
 * for their turn to end (`handoffs.json`, `io/terminal/commands.ts`). Each file is replaced whole on every
 * change (`atomic-file.ts`), and durable before the frames it adds are acknowledged.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { AppFrame } from '@switchyard/protocol';
import { writeFileAtomic } from '../outbox/atomic-file.js';

/** The pool's waiting queue, in the state directory. */
export const WAITING_FILE = 'waiting.json';
/** Handoffs waiting for their conversation's turn to end, in the state directory. */
export const HANDOFFS_FILE = 'handoffs.json';

/**
 * The frames the file holds (none when there is no file). Throws if it is there but unreadable. The
 * bridge wrote them, from frames it had validated: they are read back as the type they were written as.
 */
export function loadFrames<F extends AppFrame>(path: string): F[] {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as F[]) : [];
}

/** Replaces the file's frames with `frames`; durable on return. */
export function saveFrames(path: string, frames: readonly AppFrame[]): void {
  writeFileAtomic(path, JSON.stringify(frames));
}
