/**
 * `bridge.json`: the bridge's durable state, one atomic snapshot in the state directory.
 *
 * What it holds and why (see `bridge.ts` for the restart contract as a whole): the process record, the
 * stdout offset up to which lines were handled, the session machine's state, the keys of gateway commands
 * already written into the CLI, an *intent* written just before a line goes to the CLI's stdin, commands
 * held behind a `/clear`, the transcript tail's cursors with the history they produced, and recent exits.
 *
 * Ownership: the running bridge is the only writer, through {@link SnapshotFile}; `stop.ts` rewrites the
 * record only while no bridge runs. Every write replaces the whole file (`writeFileAtomic`), so a crash
 * leaves the old snapshot or the new one, never a mix.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppFrame, Clock, Route } from '@switchyard/protocol';
import type { ChildRecord } from './child.js';
import type { HeldFrame } from './core/hold.js';
import type { HistoryEntry } from './history.js';
import { writeFileAtomic } from './outbox.js';
import { initialSessionState, type SessionState } from './session-state.js';
import type { TranscriptCursors } from './transcript.js';

/** The snapshot's file name in the state directory. */
export const SNAPSHOT_FILE = 'bridge.json';

/** How often, at most, a throttled save reaches the disk (forced saves always do). */
const SNAPSHOT_EVERY_MS = 250;

/**
 * A write into the CLI in progress: the key, the line's `uuid` (user lines), the line and the frames it
 * announced. `read`: a restarted bridge saw the CLI's `queued` for it — kept here because the stdout offset
 * saved with it may already be past that line.
 */
export interface Intent {
  key: string;
  uuid?: string;
  read?: boolean;
  line: string;
  frames: AppFrame[];
}

/** `bridge.json`'s shape (internal to this package: `stop.ts` reads and rewrites its `child`). */
export interface Snapshot {
  version: 1;
  child?: ChildRecord;
  stdoutOffset: number;
  session: SessionState;
  /** Keys of gateway commands already written into the CLI (bounded, newest last). */
  delivered: string[];
  /** The write in progress, if any; see {@link Intent}. */
  intent?: Intent;
  /** Commands and messages waiting behind a `/clear` or `/compact` until the CLI is idle (oldest first). */
  held?: HeldFrame[];
  /** The transcript tail's cursors, written with `history` (which they produced) in one snapshot. */
  transcript?: TranscriptCursors;
  /** Recent exchanges for `/status`, oldest first (see `history.ts`). */
  history?: HistoryEntry[];
  /** The conversation's route (absent for the shared session), so the directory says whose it is. */
  route?: Route;
  /** The conversation's display name (`/rename`, or the config's). */
  name?: string;
  /** When the conversation last had input or output (ms): the least recently used is stopped first. */
  lastActiveAt?: number;
  /** Recent exits (ms), for crash-loop detection. */
  exits: number[];
  crashLoop?: boolean;
}

/** The snapshot of a bridge that has never run in this state directory. */
function initialSnapshot(): Snapshot {
  return { version: 1, stdoutOffset: 0, session: initialSessionState(), delivered: [], exits: [] };
}

/** The snapshot at `path`, or `undefined` if there is none. Throws if the file cannot be read or parsed. */
export function readSnapshot(path: string): Snapshot | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
}

/** Replaces the snapshot at `path` atomically. */
export function writeSnapshot(path: string, snapshot: Snapshot): void {
  writeFileAtomic(path, JSON.stringify(snapshot));
}

/**
 * The running bridge's writer of `bridge.json`. `save(false)` is throttled to one write per 250 ms (the
 * rest only mark it dirty, for the next pump to finish); `save(true)` writes now — used wherever something
 * must be on disk before the next step (an intent before its write, a held item before its ack).
 * `capture` copies the live parts (session state, stdout offset, transcript cursors) into the snapshot
 * just before each write, so what is written is one consistent moment.
 */
export class SnapshotFile {
  readonly path: string;
  readonly #capture: (snapshot: Snapshot) => void;
  readonly #clock: Clock;
  #lastSavedAt = 0;
  #dirty = false;

  constructor(stateDir: string, clock: Clock, capture: (snapshot: Snapshot) => void) {
    this.path = join(stateDir, SNAPSHOT_FILE);
    this.#clock = clock;
    this.#capture = capture;
  }

  /** Whether a throttled save was skipped since the last write. */
  get dirty(): boolean {
    return this.#dirty;
  }

  /** The snapshot on disk, or a fresh one. Throws if the file is there but unreadable. */
  load(): Snapshot {
    return readSnapshot(this.path) ?? initialSnapshot();
  }

  save(snapshot: Snapshot, force: boolean): void {
    if (!force && this.#clock.now() - this.#lastSavedAt < SNAPSHOT_EVERY_MS) {
      this.#dirty = true;
      return;
    }
    this.#capture(snapshot);
    writeSnapshot(this.path, snapshot);
    this.#lastSavedAt = this.#clock.now();
    this.#dirty = false;
  }
}
