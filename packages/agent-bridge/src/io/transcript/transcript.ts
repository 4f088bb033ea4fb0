/**
 * The transcript reader: tails Claude's own session files,
 * `$CLAUDE_CONFIG_DIR/projects/<cwd, every non-alphanumeric char as '-'>/<session>.jsonl` and
 * `<session>/subagents/agent-<id>.jsonl`.
 *
 * Contracts:
 * - One cursor per file (a byte offset and the file's inode), exported by `checkpoint()` and taken back
 *   through `cursors`: a tail built from a checkpoint taken right after an `onLine` call resumes with the
 *   next line — nothing skipped, nothing repeated. Cursors are keyed by the path relative to the project
 *   directory, so a checkpoint stays small and does not depend on where the config directory is.
 * - Only whole lines are handled (a partial tail is re-read, not buffered). A file that shrank was
 *   truncated and is read again from 0; a path that names another inode than the one being read was
 *   rotated: what the old inode still holds is read, then the new file from its start.
 * - The first attachment to a file without a cursor reads at most its last `backlogBytes` (the main file;
 *   sub-agent files are read whole, their first line is the prompt). Starting inside a line is harmless:
 *   a proper suffix of a JSON line never parses as JSON (its closing braces are unbalanced).
 * - Lines over the cap are skipped with a callback, never parsed; `accept` can pass over lines unparsed.
 * - `follow()` switches to another session (a new id after `/clear`). The CLI flushes its transcript in
 *   batches, so the old session's last lines can land after stdout has announced the new one: files of a
 *   session no longer followed keep being read until they have been quiet for `drainMs`, then are
 *   released and their cursors forgotten (the bridge never goes back to an old session).
 * - `fs.watch` drives reads; a slow rescan (default 2 s) is the backstop for missed events and new files.
 *   No busy polling. A sub-agent file quiet for `idleReleaseMs` has its watcher and descriptor released and
 *   its cursor kept; a rescan attaches it again only once it has grown (or was replaced).
 *
 * Stdout is the source for the live turn; this reader is for what stdout does not carry: history
 * (`history.ts`). Where the files are, and the search for a message its process died before taking, are
 * in `io/transcript/files.ts`.
 */

import { createHash } from 'node:crypto';
import { closeSync, type FSWatcher, openSync, readdirSync, readSync, statSync, watch } from 'node:fs';
import { basename, join } from 'node:path';
import { type Clock, systemClock, type TimerHandle } from '@switchyard/protocol';
import { StdoutReader } from '../process/stdout-reader.js';
import { projectDir } from './files.js';

/** One transcript line as handed to the consumer. */
export interface TranscriptLine {
  /** `main` for the session file, else the sub-agent id from `agent-<id>.jsonl`. */
  source: 'main' | string;
  file: string;
  value: Record<string, unknown>;
}

/**
 * Where reading of one file stands: bytes handled, and which file they were handled in — its inode and a
 * hash of its first `headBytes` bytes, because a file deleted and created again while no tail held it
 * open can get the same inode number back.
 */
export interface TranscriptCursor {
  offset: number;
  ino: number;
  head: string;
  headBytes: number;
}

/**
 * Bytes of lines decoded per read: bounds the strings alive at once. With a large budget a burst of
 * appended lines survived young-generation collections and grew the old space (a 190 MB RSS peak in the
 * bench while 80 MB of transcript were appended during a streamed answer; 256 KB keeps it near idle).
 */
const READ_BUDGET_BYTES = 256 * 1024;

/** Bytes of a file's start hashed into its identity (a transcript's first line has its ids and time). */
const HEAD_BYTES = 256;

/** Cursors by path relative to the project directory (`<session>.jsonl`, `<session>/subagents/…`). */
export type TranscriptCursors = Record<string, TranscriptCursor>;

export interface TranscriptTailOptions {
  configDir: string;
  cwd: string;
  /** The session to follow; change it with `follow()` after `/clear`. */
  sessionId?: string;
  /** Cursors from an earlier tail's `checkpoint()`: reading resumes exactly there. */
  cursors?: TranscriptCursors;
  onLine(line: TranscriptLine): void;
  /**
   * A cheap test of a line's text before it is parsed; a line it rejects is passed over (its cursor
   * still advances). Most transcript bytes are attachments and request records nobody here needs.
   */
  accept?(text: string, source: string): boolean;
  /**
   * Like `accept`, on the line's bytes before it is decoded (cheaper still: no string is made for a
   * line it rejects). E.g. `(line) => line.includes('"type":"assistant"')`.
   */
  acceptBytes?(line: Buffer, source: string): boolean;
  onSkipped?(file: string, bytes: number): void;
  /** The most of an existing main file read on its first attachment (default: all; 0: only new lines). */
  backlogBytes?: number;
  maxLineBytes?: number;
  rescanMs?: number;
  idleReleaseMs?: number;
  /** Time for the rescan timer and each file's idle release (default: system). */
  clock?: Clock | undefined;
  /** How long an old session's files are still read after `follow()` moved on (default 10 s of quiet). */
  drainMs?: number;
}

interface Tailed {
  /** Path relative to the project directory: the cursor's key. */
  rel: string;
  source: string;
  reader: StdoutReader;
  ino: number;
  head: string;
  headBytes: number;
  watcher: FSWatcher | undefined;
  lastActivity: number;
}

/** A running tail; `stop()` releases every watcher and descriptor. */
export class TranscriptTail {
  readonly #options: TranscriptTailOptions;
  readonly #dir: string;
  /** Attached files: a watcher and an open reader each. */
  readonly #files = new Map<string, Tailed>();
  /** Cursors of known files not attached now (idle sub-agents), so attaching again resumes there. */
  readonly #cursors = new Map<string, TranscriptCursor>();
  #sessionId: string | undefined;
  #timer: TimerHandle | undefined;

  constructor(options: TranscriptTailOptions) {
    this.#options = options;
    this.#dir = projectDir(options.configDir, options.cwd);
    this.#sessionId = options.sessionId;
    for (const [rel, cursor] of Object.entries(options.cursors ?? {})) this.#cursors.set(rel, cursor);
  }

  #now(): number {
    return (this.#options.clock ?? systemClock).now();
  }

  /** The session being followed. */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** Attached files (watchers and descriptors held). */
  get attached(): number {
    return this.#files.size;
  }

  start(): void {
    // Files an earlier tail was still reading (an old session in its drain window, say) first.
    for (const rel of [...this.#cursors.keys()]) this.#consider(rel);
    this.rescan();
    const clock = this.#options.clock ?? systemClock;
    const every = this.#options.rescanMs ?? 2000;
    const rescan = (): void => {
      this.#timer = clock.setTimeout(rescan, every);
      this.rescan();
    };
    this.#timer = clock.setTimeout(rescan, every);
  }

  /** Follows another session (a new id after `/clear`); the old one's files are drained, then released. */
  follow(sessionId: string): void {
    if (sessionId === this.#sessionId) return;
    // What the old session's files hold now comes before anything of the new one.
    for (const tailed of [...this.#files.values()]) this.#read(tailed);
    this.#sessionId = sessionId;
    this.rescan();
  }

  /** Every file's cursor, attached or not; persist it together with whatever `onLine` built. */
  checkpoint(): TranscriptCursors {
    const out: TranscriptCursors = Object.fromEntries(this.#cursors);
    for (const [rel, tailed] of this.#files) out[rel] = this.#cursorOf(tailed);
    return out;
  }

  /** Attaches new and grown files, reads what each has appended, releases idle and drained ones. */
  rescan(): void {
    const sessionId = this.#sessionId;
    const now = this.#now();
    if (sessionId) {
      this.#consider(`${sessionId}.jsonl`);
      const subDir = join(sessionId, 'subagents');
      let entries: string[] = [];
      try {
        entries = readdirSync(join(this.#dir, subDir));
      } catch {
        // no sub-agents yet
      }
      for (const entry of entries) {
        if (entry.startsWith('agent-') && entry.endsWith('.jsonl')) this.#consider(join(subDir, entry));
      }
    }
    for (const tailed of [...this.#files.values()]) {
      this.#read(tailed);
      let ino: number | undefined;
      try {
        ino = statSync(join(this.#dir, tailed.rel)).ino;
      } catch {
        ino = undefined;
      }
      if (ino !== tailed.ino) {
        // Deleted, or rotated: the old inode has been read to its end above. Start the new file afresh.
        this.#release(tailed, true);
        if (ino !== undefined) this.#consider(tailed.rel);
        continue;
      }
      const quiet = now - tailed.lastActivity;
      if (!this.#current(tailed.rel)) {
        if (quiet > (this.#options.drainMs ?? 10_000)) this.#release(tailed, true);
      } else if (tailed.source !== 'main' && quiet > (this.#options.idleReleaseMs ?? 5 * 60_000)) {
        this.#release(tailed, false);
      }
    }
    // Cursors of an old session's files that are not attached will never be used again.
    for (const rel of this.#cursors.keys()) if (!this.#current(rel)) this.#cursors.delete(rel);
  }

  stop(): void {
    (this.#options.clock ?? systemClock).clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const tailed of [...this.#files.values()]) this.#release(tailed, false);
  }

  #current(rel: string): boolean {
    const id = this.#sessionId;
    return id !== undefined && (rel === `${id}.jsonl` || rel.startsWith(`${id}/`));
  }

  /** Attaches a file unless it is attached, missing, or known and unchanged since its cursor. */
  #consider(rel: string): void {
    if (this.#files.has(rel)) return;
    const file = join(this.#dir, rel);
    let size: number;
    let ino: number;
    try {
      ({ size, ino } = statSync(file));
    } catch {
      this.#cursors.delete(rel);
      return; // not written yet, or gone
    }
    const source = rel.includes('/') ? basename(rel).slice('agent-'.length, -'.jsonl'.length) : 'main';
    const cursor = this.#cursors.get(rel);
    let start: number;
    if (cursor && cursor.ino === ino && headOf(file, cursor.headBytes) === cursor.head) {
      // An idle sub-agent file with nothing new stays released. The main file is always attached: its
      // next line may come just before a `follow()`, and only an attached file is drained after one.
      if (cursor.offset === size && source !== 'main') return;
      start = cursor.offset; // the reader itself starts over at 0 if the file shrank (truncation)
    } else {
      // Never seen, or replaced while nobody read it.
      start = source === 'main' ? Math.max(0, size - (this.#options.backlogBytes ?? size)) : 0;
    }
    const reader = new StdoutReader(file, start, this.#options.maxLineBytes ?? 2 * 1024 * 1024);
    try {
      if (reader.inode() !== ino) throw new Error('replaced between stat and open');
    } catch {
      reader.close();
      return; // the next rescan tries again
    }
    this.#cursors.delete(rel);
    const headBytes = Math.min(size, HEAD_BYTES);
    const tailed: Tailed = {
      rel,
      source,
      reader,
      ino,
      head: headOf(file, headBytes),
      headBytes,
      watcher: undefined,
      lastActivity: this.#now(),
    };
    try {
      tailed.watcher = watch(file, () => this.#read(tailed));
      tailed.watcher.on('error', () => this.#release(tailed, false));
    } catch {
      // the rescan still reads it
    }
    this.#files.set(rel, tailed);
    this.#read(tailed);
  }

  /** Closes a file's watcher and descriptor; its cursor is kept for later unless `forget`. */
  #release(tailed: Tailed, forget: boolean): void {
    if (this.#files.get(tailed.rel) !== tailed) return;
    tailed.watcher?.close();
    tailed.reader.close();
    this.#files.delete(tailed.rel);
    if (forget) this.#cursors.delete(tailed.rel);
    else this.#cursors.set(tailed.rel, this.#cursorOf(tailed));
  }

  #cursorOf(tailed: Tailed): TranscriptCursor {
    return { offset: tailed.reader.offset, ino: tailed.ino, head: tailed.head, headBytes: tailed.headBytes };
  }

  #read(tailed: Tailed): void {
    for (;;) {
      if (this.#files.get(tailed.rel) !== tailed) return; // released (a late watch event)
      const before = tailed.reader.offset;
      let lines: ReturnType<StdoutReader['read']>;
      try {
        const acceptBytes = this.#options.acceptBytes;
        lines = tailed.reader.read(
          READ_BUDGET_BYTES,
          acceptBytes && ((line: Buffer) => acceptBytes(line, tailed.source)),
        );
      } catch {
        return; // unreadable now; the rescan decides
      }
      const first = lines[0];
      if (first === undefined) return;
      tailed.lastActivity = this.#now();
      // Truncated (the reader started over below its offset), or young and still growing: the file's
      // identity is taken again, so a checkpoint names what is there now.
      if (first.end - first.bytes - 1 < before || tailed.headBytes < HEAD_BYTES) {
        tailed.headBytes = Math.min(lines.at(-1)?.end ?? 0, HEAD_BYTES);
        tailed.head = headOf(join(this.#dir, tailed.rel), tailed.headBytes);
      }
      this.#handle(tailed, lines);
    }
  }

  #handle(tailed: Tailed, lines: ReturnType<StdoutReader['read']>): void {
    const file = join(this.#dir, tailed.rel);
    const accept = this.#options.accept;
    for (const line of lines) {
      // Advanced before `onLine`: a checkpoint taken inside it already counts this line as handled.
      tailed.reader.advance(line.end);
      if (line.unwanted) continue;
      if (line.text === undefined) {
        this.#options.onSkipped?.(file, line.bytes);
        continue;
      }
      if (accept && !accept(line.text, tailed.source)) continue;
      let value: unknown;
      try {
        value = JSON.parse(line.text);
      } catch {
        continue;
      }
      if (typeof value === 'object' && value !== null) {
        this.#options.onLine({ source: tailed.source, file, value: value as Record<string, unknown> });
      }
    }
  }
}

/** A short hash of a file's first `bytes` bytes ('' when it cannot be read). */
function headOf(file: string, bytes: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(bytes);
    const got = readSync(fd, buf, 0, bytes, 0);
    return createHash('sha1').update(buf.subarray(0, got)).digest('base64').slice(0, 16);
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
