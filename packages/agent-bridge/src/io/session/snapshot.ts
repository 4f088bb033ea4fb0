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
 *
 * A delivery into the CLI saves the conversation's state not here but in the outbox log, in the same
 * record as the frames it announces and the peer cursor ({@link SnapshotFile.saveInLog}): one append and
 * one fsync instead of a rewrite of this file (two fsyncs) and a write per frame. That state is the
 * snapshot without the parts only this file holds ({@link FILE_ONLY}: the process record, exits, the
 * crash-loop flag, route and name, which `stop.ts` and the operator tools read here). Every save numbers
 * the snapshot (`rev`); loading takes this file and lays the log's state over it when the log's is newer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, Route } from '@switchyard/protocol';
import type { HeldFrame } from '../../core/delivery/hold.js';
import { initialSessionState, type SessionState } from '../../core/session/state.js';
import { writeFileAtomic } from '../outbox/atomic-file.js';
import type { ChildRecord } from '../process/child.js';
import type { HistoryEntry } from '../transcript/history.js';
import type { TranscriptCursors } from '../transcript/transcript.js';

/** The snapshot's file name in the state directory. */
export const SNAPSHOT_FILE = 'bridge.json';

/** How often, at most, a throttled save reaches the disk (forced saves always do). */
const SNAPSHOT_EVERY_MS = 250;

/**
 * A write into the CLI in progress: the key, the line's `uuid` (user lines) and the line (the frames it
 * announced are in the outbox, stored in the same write). `read`: a restarted bridge saw the CLI's
 * `queued` for it — kept here because the stdout offset saved with it may already be past that line.
 */
export interface Intent {
  key: string;
  uuid?: string;
  read?: boolean;
  line: string;
}

/** `bridge.json`'s shape (internal to this package: `stop.ts` reads and rewrites its `child`). */
export interface Snapshot {
  version: 1;
  /** Counts the saves, here and in the outbox log: the newer of the two is the conversation's state. */
  rev?: number;
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

/** The parts only `bridge.json` holds; the outbox log's state never carries them (see the module comment). */
const FILE_ONLY = [
  'child',
  'exits',
  'crashLoop',
  'route',
  'name',
] as const satisfies readonly (keyof Snapshot)[];

/** Where a conversation's state saved with a delivery is kept: the bridge's outbox log. */
export interface StateLog {
  stateOf(conversation: string): string | undefined;
  saveState(conversation: string, json: string): void;
  forgetState(conversation: string): void;
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
  readonly #log: { store: StateLog; conversation: string } | undefined;
  #lastSavedAt = 0;
  #dirty = false;

  /** `log`: the outbox log and this conversation's key in it, for {@link saveInLog} and {@link load}. */
  constructor(
    stateDir: string,
    clock: Clock,
    capture: (snapshot: Snapshot) => void,
    log?: { store: StateLog; conversation: string },
  ) {
    this.path = join(stateDir, SNAPSHOT_FILE);
    this.#clock = clock;
    this.#capture = capture;
    this.#log = log;
  }

  /** Whether a throttled save was skipped since the last write. */
  get dirty(): boolean {
    return this.#dirty;
  }

  /** The snapshot on disk, or a fresh one. Throws if the file is there but unreadable. */
  load(): Snapshot {
    const file = readSnapshot(this.path) ?? initialSnapshot();
    const text = this.#log?.store.stateOf(this.#log.conversation);
    const logged = text === undefined ? undefined : (JSON.parse(text) as Partial<Snapshot>);
    if (!logged || (logged.rev ?? 0) <= (file.rev ?? 0)) return file;
    const merged: Snapshot = { ...file, ...logged };
    for (const key of FILE_ONLY) {
      if (file[key] === undefined) delete merged[key];
      else (merged as unknown as Record<string, unknown>)[key] = file[key];
    }
    return merged;
  }

  save(snapshot: Snapshot, force: boolean): void {
    if (!force && this.#clock.now() - this.#lastSavedAt < SNAPSHOT_EVERY_MS) {
      this.#dirty = true;
      return;
    }
    this.#capture(snapshot);
    snapshot.rev = (snapshot.rev ?? 0) + 1;
    writeSnapshot(this.path, snapshot);
    // This file is now the newest: the log need not keep the state (its compaction drops it).
    this.#log?.store.forgetState(this.#log.conversation);
    this.#lastSavedAt = this.#clock.now();
    this.#dirty = false;
  }

  /**
   * Saves the snapshot durably as a record of the outbox log (inside the caller's group, it is part of
   * that group's one write): everything but {@link FILE_ONLY}, which this save never changes. Falls back
   * to a forced {@link save} without a log.
   */
  saveInLog(snapshot: Snapshot): void {
    if (!this.#log) {
      this.save(snapshot, true);
      return;
    }
    this.#capture(snapshot);
    snapshot.rev = (snapshot.rev ?? 0) + 1;
    const state: Record<string, unknown> = { ...snapshot };
    for (const key of FILE_ONLY) delete state[key];
    this.#log.store.saveState(this.#log.conversation, JSON.stringify(state));
    // This file is now behind the log: a throttled save writes it once the throttle allows (dirty).
    this.#lastSavedAt = this.#clock.now();
    this.#dirty = true;
  }
}
