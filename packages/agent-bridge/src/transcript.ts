/**
 * The transcript reader: tails Claude's own session files,
 * `$CLAUDE_CONFIG_DIR/projects/<cwd, every non-alphanumeric char as '-'>/<session>.jsonl` and
 * `<session>/subagents/agent-<id>.jsonl`.
 *
 * Contracts:
 * - One cursor per file, kept across re-targeting: following a new session file after `/clear` and
 *   coming back never skips or repeats a line.
 * - Only whole lines are handled (a partial tail is re-read, not buffered); a file that shrank was
 *   truncated or replaced and is read again from 0.
 * - Lines over the cap are skipped with a callback, never parsed.
 * - `fs.watch` drives reads; a slow rescan (default 2 s) is the backstop for missed events and new files.
 *   No busy polling. Sub-agent files idle for `idleReleaseMs` have their watcher released; a rescan picks
 *   them up again if they grow.
 *
 * Stdout is the source for the live turn; this reader is for what stdout does not carry or what must be
 * checked after a crash — whether a message reached the CLI (`findMarker`), sub-agent detail, history.
 */
import {
  closeSync,
  type FSWatcher,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
  watch,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { StdoutReader } from './stdout-reader.js';

/** The directory Claude keeps a working directory's sessions in. */
export function projectDir(configDir: string, cwd: string): string {
  return join(configDir, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'));
}

/** `CLAUDE_CONFIG_DIR` as the CLI resolves it. */
export function claudeConfigDir(env: NodeJS.ProcessEnv): string {
  return env.CLAUDE_CONFIG_DIR ?? join(env.HOME ?? homedir(), '.claude');
}

/** One transcript line as handed to the consumer. */
export interface TranscriptLine {
  /** `main` for the session file, else the sub-agent id from `agent-<id>.jsonl`. */
  source: 'main' | string;
  file: string;
  value: Record<string, unknown>;
}

export interface TranscriptTailOptions {
  configDir: string;
  cwd: string;
  /** The session to follow; change it with `follow()` after `/clear`. */
  sessionId?: string;
  onLine(line: TranscriptLine): void;
  onSkipped?(file: string, bytes: number): void;
  /** Start at the end of files that exist at attach time (default true: history is not replayed). */
  fromEnd?: boolean;
  maxLineBytes?: number;
  rescanMs?: number;
  idleReleaseMs?: number;
}

interface Tailed {
  source: string;
  reader: StdoutReader;
  watcher: FSWatcher | undefined;
  lastActivity: number;
}

/** A running tail; `stop()` releases every watcher and descriptor. */
export class TranscriptTail {
  readonly #options: TranscriptTailOptions;
  readonly #dir: string;
  readonly #files = new Map<string, Tailed>();
  /** Cursors of files no longer watched, so re-attaching resumes where it stopped. */
  readonly #cursors = new Map<string, number>();
  #sessionId: string | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: TranscriptTailOptions) {
    this.#options = options;
    this.#dir = projectDir(options.configDir, options.cwd);
    this.#sessionId = options.sessionId;
  }

  start(): void {
    this.rescan();
    this.#timer = setInterval(() => this.rescan(), this.#options.rescanMs ?? 2000);
    this.#timer.unref();
  }

  /** Follows another session (a new id after `/clear`); the old file's cursor is kept. */
  follow(sessionId: string): void {
    if (sessionId === this.#sessionId) return;
    this.#sessionId = sessionId;
    this.rescan();
  }

  /** Attaches new files, reads what each has appended, releases idle sub-agent files. */
  rescan(): void {
    const sessionId = this.#sessionId;
    if (!sessionId) return;
    const now = Date.now();
    this.#attach(join(this.#dir, `${sessionId}.jsonl`), 'main');
    const subDir = join(this.#dir, sessionId, 'subagents');
    let entries: string[] = [];
    try {
      entries = readdirSync(subDir);
    } catch {
      // no sub-agents yet
    }
    for (const entry of entries) {
      if (entry.startsWith('agent-') && entry.endsWith('.jsonl')) {
        this.#attach(join(subDir, entry), entry.slice('agent-'.length, -'.jsonl'.length));
      }
    }
    for (const [file, tailed] of this.#files) {
      this.#read(file, tailed);
      const idle = now - tailed.lastActivity > (this.#options.idleReleaseMs ?? 5 * 60_000);
      const stale =
        tailed.source === 'main' ? basename(file) !== `${sessionId}.jsonl` : !file.includes(sessionId);
      if ((tailed.source !== 'main' && idle) || stale) this.#release(file, tailed);
    }
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    for (const [file, tailed] of this.#files) this.#release(file, tailed);
  }

  #attach(file: string, source: string): void {
    if (this.#files.has(file)) return;
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      return; // not written yet
    }
    // Sub-agent files are read from 0 (their first line is the prompt); the main file from the end
    // unless told otherwise, or from where an earlier attachment left it.
    const start =
      this.#cursors.get(file) ?? (source === 'main' && (this.#options.fromEnd ?? true) ? size : 0);
    const tailed: Tailed = {
      source,
      reader: new StdoutReader(file, start, this.#options.maxLineBytes ?? 2 * 1024 * 1024),
      watcher: undefined,
      lastActivity: Date.now(),
    };
    try {
      tailed.watcher = watch(file, () => this.#read(file, tailed));
      tailed.watcher.on('error', () => this.#release(file, tailed));
    } catch {
      // the rescan still reads it
    }
    this.#files.set(file, tailed);
    this.#read(file, tailed);
  }

  #release(file: string, tailed: Tailed): void {
    tailed.watcher?.close();
    this.#cursors.set(file, tailed.reader.offset);
    tailed.reader.close();
    this.#files.delete(file);
  }

  #read(file: string, tailed: Tailed): void {
    for (;;) {
      let lines: ReturnType<StdoutReader['read']>;
      try {
        lines = tailed.reader.read();
      } catch {
        return; // rotated away; the rescan re-attaches
      }
      if (lines.length === 0) return;
      tailed.lastActivity = Date.now();
      this.#handle(file, tailed, lines);
    }
  }

  #handle(file: string, tailed: Tailed, lines: ReturnType<StdoutReader['read']>): void {
    for (const line of lines) {
      tailed.reader.advance(line.end);
      if (line.text === undefined) {
        this.#options.onSkipped?.(file, line.bytes);
        continue;
      }
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

/**
 * Whether any session file of this working directory contains `marker` (as it appears inside a JSON
 * string). Used after a crash to learn whether a message reached the CLI; reads at most the last
 * `maxBytes` of each of the most recently modified files.
 */
export function findMarker(
  configDir: string,
  cwd: string,
  marker: string,
  maxBytes = 16 * 1024 * 1024,
): boolean {
  const dir = projectDir(configDir, cwd);
  const needle = Buffer.from(JSON.stringify(marker).slice(1, -1), 'utf8');
  let files: { path: string; mtime: number }[];
  try {
    files = readdirSync(dir)
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime)
      .slice(0, 3);
  } catch {
    return false;
  }
  for (const { path } of files) {
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, maxBytes);
      const buf = Buffer.allocUnsafe(length);
      readSync(fd, buf, 0, length, size - length);
      if (buf.indexOf(needle) >= 0) return true;
    } finally {
      closeSync(fd);
    }
  }
  return false;
}
