/**
 * Keeps a conversation's `stdout.log` bounded on disk while one Claude process writes it for days.
 *
 * The process holds the log's file descriptor for its whole life and outlives the bridge, so the file
 * can be neither renamed (the process would keep writing the old inode) nor truncated (copy-truncate
 * loses what is written in between, and the offsets recorded in `bridge.json` would point past the
 * end). Instead the bridge punches a hole (`fallocate --punch-hole`, which keeps the size) over the part
 * of the file it has handled *and recorded*: those blocks are freed, byte offsets stay valid, and the
 * file's logical size keeps growing while its allocated size (`stat().blocks * 512`) stays bounded.
 *
 * Invariant: a hole never reaches past the offset in the `bridge.json` on disk, so a bridge killed at
 * any moment resumes reading at a recorded offset that is still followed by the real bytes. Holes start
 * at block boundaries and end `keepBytes` before that offset, so the most recent handled output stays
 * readable (`tail stdout.log`) for an operator.
 *
 * Bound: allocated ≤ 2 × `keepBytes` + one block + what the process wrote after the recorded offset
 * (lines not yet handled, and handled lines not yet recorded: the snapshot is written at most every
 * 250 ms while stdout flows).
 */
import { execFileSync } from 'node:child_process';
import type { Logger } from '@switchyard/protocol';

/** Handled output kept readable before the recorded offset, and the least a punch frees. */
export const STDOUT_KEEP_BYTES = 4 * 1024 * 1024;

/** The filesystem block a hole is aligned to (a partial block would only be zeroed, not freed). */
const BLOCK = 4096;

/** A range of the log to free: `[offset, offset + length)`. */
export interface Hole {
  offset: number;
  length: number;
}

/**
 * Pure: the hole to punch now, given the offset recorded on disk and how far holes already reach
 * (`punched`, 0 after a restart: punching a hole again is harmless). Undefined while less than
 * `keepBytes` would be freed, so the punches (each a short-lived process) come once per `keepBytes`
 * of output.
 */
export function holeToPunch(recorded: number, punched: number, keepBytes: number): Hole | undefined {
  const end = Math.floor(Math.max(0, recorded - keepBytes) / BLOCK) * BLOCK;
  const from = Math.min(punched, end);
  if (end - from < keepBytes) return undefined;
  return { offset: from, length: end - from };
}

/** Frees `hole` of the file at `path`; throws if it could not. */
export type PunchHole = (path: string, hole: Hole) => void;

/**
 * Punches with util-linux's `fallocate` (Node has no `fallocate(2)`). Synchronous on purpose: between
 * the decision and the punch, nothing may truncate the log for a new process (that happens on this same
 * thread), or the hole would land on the new process's output. About 3 ms per call.
 */
export const fallocatePunchHole: PunchHole = (path, hole) => {
  execFileSync(
    'fallocate',
    ['--punch-hole', '--offset', String(hole.offset), '--length', String(hole.length), path],
    { stdio: 'ignore', timeout: 10_000 },
  );
};

/** Options of {@link StdoutTrimmer}. */
export interface StdoutTrimmerOptions {
  /** The log. */
  path: string;
  keepBytes?: number;
  log: Logger;
  punch?: PunchHole;
}

/** One log's trimmer: told each recorded offset, it punches when {@link holeToPunch} says so. */
export class StdoutTrimmer {
  readonly #path: string;
  readonly #keepBytes: number;
  readonly #log: Logger;
  readonly #punch: PunchHole;
  #punched = 0;
  #failed = false;

  constructor(options: StdoutTrimmerOptions) {
    this.#path = options.path;
    this.#keepBytes = options.keepBytes ?? STDOUT_KEEP_BYTES;
    this.#log = options.log;
    this.#punch = options.punch ?? fallocatePunchHole;
  }

  /**
   * `offset` is on disk (in `bridge.json`) as the point a restarted bridge reads from. A smaller offset
   * than before means a new process truncated the log: holes start again from 0.
   */
  recorded(offset: number): void {
    if (this.#failed) return;
    if (offset < this.#punched) this.#punched = 0;
    const hole = holeToPunch(offset, this.#punched, this.#keepBytes);
    if (!hole) return;
    try {
      this.#punch(this.#path, hole);
      this.#punched = hole.offset + hole.length;
    } catch (err) {
      // Not fatal: the log only grows as it did before. Said once, not per punch.
      this.#failed = true;
      this.#log.warn(
        { err: (err as Error).message },
        'could not punch a hole in stdout.log (is util-linux `fallocate` installed, and does the filesystem support hole punching?): the log will grow without bound',
      );
    }
  }
}
