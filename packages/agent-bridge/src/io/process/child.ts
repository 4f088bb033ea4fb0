/**
 * The Claude process as something that outlives the bridge: started detached with its streams in the
 * state directory, recognised again by pid *and* start time, and stopped only on a real shutdown.
 *
 * Layout in the state directory (names shared by the spawn and adopt paths — if they drifted, an
 * adopted process would be read from a file nothing writes and would simply look idle for ever):
 * - `stdin.fifo`  the process's stdin. The process holds it open read-write itself, so it is its own
 *                 last writer and never sees EOF when a bridge goes away.
 * - `stdout.log`, `stderr.log`  its output, new files when a new process starts (offsets restart at 0).
 *                 `stdout.log` keeps its logical size while the bridge frees what it handled
 *                 (`stdout-trim.ts`), so offsets stay valid for as long as the process runs.
 *
 * The bridge depends on {@link ChildHandle}, not on `ChildProcess`: after a restart there is no
 * `ChildProcess` to hold, only a record, so liveness is always a question asked of the record.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readlinkSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { type Clock, readStartTime, systemClock, type TimerHandle } from '@switchyard/protocol';
import { otherPids } from './proc.js';

export const STDIN_FIFO = 'stdin.fifo';
export const STDOUT_LOG = 'stdout.log';
export const STDERR_LOG = 'stderr.log';

/** What is written down about a running process so the next bridge can find it. */
export interface ChildRecord {
  pid: number;
  /** Field 22 of `/proc/<pid>/stat` (clock ticks since boot): a reused pid has a different one. */
  startTime: string;
  startedAt: number;
}

/** Alive: the recorded process is running. Dead: it is not. Unknown: this machine would not say. */
export type Liveness = 'alive' | 'dead' | 'unknown';

/** Reads a process's start time (one reading for the bridge's records and the state locks). */
export { readStartTime };

/** Whether the recorded process is the one still running. Never guesses "dead" on an error. */
export function liveness(record: ChildRecord): Liveness {
  const found = readStartTime(record.pid);
  if (!found.ok) return found.missing ? 'dead' : 'unknown';
  if (found.startTime !== record.startTime || found.zombie) return 'dead';
  return 'alive';
}

/** How long `detach` waits for room to finish a line half in the pipe. */
const DETACH_FLUSH_MS = 30_000;

/** The small surface the bridge needs of its process. */
export interface ChildHandle {
  readonly record: ChildRecord;
  liveness(): Liveness;
  /**
   * Writes one line (a newline is added) into the process's stdin, in order with every earlier line.
   * Never blocks: what the pipe has no room for is written from a timer. Throws if nothing reads the
   * fifo at the time of the call.
   */
  writeLine(line: string): void;
  /**
   * Whether a line written now would reach the process: it is alive and something reads its fifo. A
   * process that died a moment ago fails this, where a write would fail half-way through a delivery.
   * `known`: the liveness the caller read for this process just now, used instead of asking again.
   */
  writable(known?: Liveness): boolean;
  /** SIGTERM to the process group, wait up to `graceMs`, then SIGKILL. Resolves when it is gone. */
  terminate(graceMs: number): Promise<void>;
  /**
   * Releases this side's handles; the process keeps running. A line still half in the pipe is finished
   * first (waiting for room on the clock, never blocking the event loop), for up to 30 s. Never rejects.
   */
  detach(): Promise<void>;
}

/** Options for starting a process. */
export interface SpawnOptions {
  stateDir: string;
  workDir: string;
  bin: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Time for the record's start stamp, the stdin backlog's flushes and the stop's grace (default: system). */
  clock?: Clock | undefined;
}

/** Failures of this domain; the message says what to do. */
export class ChildError extends Error {
  override readonly name = 'ChildError';
  readonly code: 'cli_missing' | 'spawn_failed' | 'fifo';
  constructor(code: ChildError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** Resolves `bin` as `spawn` would, or throws a {@link ChildError} naming the path that is missing. */
export function resolveBinary(bin: string, env: NodeJS.ProcessEnv): string {
  const candidates = bin.includes('/')
    ? [bin]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, bin));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next one
    }
  }
  throw new ChildError(
    'cli_missing',
    bin.includes('/')
      ? `the Claude CLI was not found or is not executable at ${bin}: install it or fix the configured path`
      : `the Claude CLI "${bin}" was not found on PATH: install it or configure its absolute path`,
  );
}

/**
 * Opens a new, empty file at `path` for a new process's output: the old file is unlinked first rather
 * than truncated. Anything that still holds the old one (the previous process in its last moments, or a
 * process it started, which inherits its stdout) writes at its own offset: into a truncated file that
 * made a run of zeros and a stray line in the middle of the new process's output, which the reader
 * skipped as one malformed line, and the new process's first events with it. Into the unlinked file it
 * goes nowhere anyone reads.
 */
function freshLog(path: string): number {
  rmSync(path, { force: true });
  return openSync(path, 'w', 0o600);
}

/**
 * Ends every process that reads `fifoPath` (its stdin) — called before a new process is started on it, when
 * no recorded process is alive, so each is an orphan: a bridge killed between starting a process and
 * recording it left it running on the conversation's fifo, where it would read half of what the new one
 * is sent (the soak saw two CLIs answer one chat at once). Returns their pids. Linux's `/proc`; elsewhere
 * none are found.
 */
export function endOrphansOn(fifoPath: string): number[] {
  const ended: number[] = [];
  for (const pid of otherPids()) {
    let stdin: string;
    try {
      stdin = readlinkSync(`/proc/${pid}/fd/0`);
    } catch {
      continue; // gone, or not ours to read
    }
    if (stdin !== fifoPath) continue;
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
        ended.push(pid);
        break;
      } catch {
        // not a group leader, or gone already
      }
    }
  }
  return ended;
}

/**
 * Starts a new process. The fifo is created if missing; the logs are new files. The caller must have
 * established that no recorded process is alive (two CLIs on one session file corrupt it); orphans on the
 * fifo are ended first ({@link endOrphansOn}) and named in `orphans`.
 */
export function spawnChild(options: SpawnOptions): {
  handle: ChildHandle;
  process: ChildProcess;
  orphans: number[];
} {
  const bin = resolveBinary(options.bin, options.env);
  if (!isAbsolute(options.workDir) || !existsSync(options.workDir)) {
    throw new ChildError('spawn_failed', `the agent's working directory ${options.workDir} does not exist`);
  }
  const fifoPath = join(options.stateDir, STDIN_FIFO);
  if (!existsSync(fifoPath)) {
    try {
      execFileSync('mkfifo', ['-m', '600', fifoPath]);
    } catch (err) {
      throw new ChildError('fifo', `could not create the stdin fifo ${fifoPath}: ${(err as Error).message}`);
    }
  }
  const orphans = endOrphansOn(fifoPath);
  // Read-write, so the process is its own writer: see the file comment.
  const stdin = openSync(fifoPath, constants.O_RDWR);
  const stdout = freshLog(join(options.stateDir, STDOUT_LOG));
  const stderr = freshLog(join(options.stateDir, STDERR_LOG));
  let child: ChildProcess;
  try {
    child = spawn(bin, options.args, {
      cwd: options.workDir,
      env: options.env,
      detached: true,
      stdio: [stdin, stdout, stderr],
    });
  } finally {
    closeSync(stdin);
    closeSync(stdout);
    closeSync(stderr);
  }
  const pid = child.pid;
  if (pid === undefined) throw new ChildError('spawn_failed', `could not start ${bin}`);
  // Reaped by Node through this object while this bridge lives; after it, by whoever inherits it.
  child.unref();
  child.on('error', () => {});
  const found = readStartTime(pid);
  // A process that exited at once may already be a zombie; its start time is still readable until reaped.
  const startTime = found.ok ? found.startTime : 'gone';
  const record: ChildRecord = { pid, startTime, startedAt: (options.clock ?? systemClock).now() };
  return { handle: adoptChild(options.stateDir, record, options.clock), process: child, orphans };
}

/** A handle on a recorded process (just started, or left running by an earlier bridge). */
export function adoptChild(stateDir: string, record: ChildRecord, clock: Clock = systemClock): ChildHandle {
  const fifoPath = join(stateDir, STDIN_FIFO);
  let fd: number | undefined;
  const open = (): number => {
    // Non-blocking so a fifo nobody reads fails at once (ENXIO) instead of hanging the event loop.
    fd ??= openSync(fifoPath, constants.O_WRONLY | constants.O_NONBLOCK);
    return fd;
  };
  /**
   * Bytes the pipe had no room for yet (64 KB fills with one large image while the CLI is busy). They go
   * out from a timer, in order, so a full pipe never blocks the event loop — every conversation's
   * stdout, the socket and its pings keep running meanwhile.
   */
  const backlog: Buffer[] = [];
  let flushTimer: TimerHandle | undefined;
  /** Writes what fits now; 0 when the pipe is full. Throws on anything else (nobody reads: ENXIO, EPIPE). */
  const writeSome = (target: number, bytes: Buffer): number => {
    try {
      return writeSync(target, bytes, 0, bytes.length);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return 0;
      throw err;
    }
  };
  const flushSome = (): void => {
    while (backlog.length > 0 && fd !== undefined) {
      const head = backlog[0] as Buffer;
      const written = writeSome(fd, head);
      if (written < head.length) {
        backlog[0] = head.subarray(written);
        return;
      }
      backlog.shift();
    }
  };
  const scheduleFlush = (): void => {
    if (flushTimer) return;
    flushTimer = clock.setTimeout(() => {
      flushTimer = undefined;
      try {
        flushSome();
      } catch {
        // The reader is gone: the process's exit is noticed and reported by its liveness check.
        backlog.length = 0;
        return;
      }
      if (backlog.length > 0) scheduleFlush();
    }, 5);
  };
  return {
    record,
    liveness: () => liveness(record),
    writeLine(line) {
      const bytes = Buffer.from(`${line}\n`, 'utf8');
      if (backlog.length > 0) {
        // Behind bytes still waiting for room: in order, after them.
        backlog.push(bytes);
        return;
      }
      const written = writeSome(open(), bytes);
      if (written < bytes.length) {
        backlog.push(bytes.subarray(written));
        scheduleFlush();
      }
    },
    writable(known) {
      if ((known ?? liveness(record)) !== 'alive') return false;
      try {
        open();
        return true;
      } catch {
        return false;
      }
    },
    async terminate(graceMs) {
      const signal = (sig: NodeJS.Signals): void => {
        if (liveness(record) !== 'alive') return;
        try {
          process.kill(-record.pid, sig);
        } catch {
          try {
            process.kill(record.pid, sig);
          } catch {
            // already gone
          }
        }
      };
      signal('SIGTERM');
      const deadline = clock.now() + graceMs;
      while (liveness(record) === 'alive' && clock.now() < deadline) await clock.sleep(50);
      if (liveness(record) === 'alive') {
        signal('SIGKILL');
        while (liveness(record) === 'alive') await clock.sleep(20);
      }
    },
    async detach() {
      clock.clearTimeout(flushTimer);
      flushTimer = undefined;
      // A line half in the pipe would be cut short for the next bridge: finish it first, waiting for
      // room on the clock (the event loop, every other conversation and the socket run meanwhile).
      const deadline = clock.now() + DETACH_FLUSH_MS;
      try {
        flushSome();
        while (backlog.length > 0 && fd !== undefined && clock.now() < deadline) {
          await clock.sleep(5);
          flushSome();
        }
      } catch {
        // nobody reads any more
      }
      backlog.length = 0;
      if (fd !== undefined) {
        try {
          closeSync(fd);
        } catch {
          // already closed
        }
        fd = undefined;
      }
    },
  };
}

/** The end of the stderr log, trimmed of blank lines at both ends (a shell's complaint ends with one). */
export function stderrTail(stateDir: string, maxLines = 50, maxChars = 3000): string {
  let text: string;
  try {
    const path = join(stateDir, STDERR_LOG);
    const size = statSync(path).size;
    const fd = openSync(path, 'r');
    try {
      const length = Math.min(size, 64 * 1024);
      const buf = Buffer.alloc(length);
      readSync(fd, buf, 0, length, size - length);
      text = buf.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
  const lines = text.split('\n').slice(-maxLines);
  while (lines.length > 0 && (lines[0] ?? '').trim() === '') lines.shift();
  while (lines.length > 0 && (lines[lines.length - 1] ?? '').trim() === '') lines.pop();
  const joined = lines.join('\n');
  return joined.length > maxChars ? joined.slice(-maxChars) : joined;
}
