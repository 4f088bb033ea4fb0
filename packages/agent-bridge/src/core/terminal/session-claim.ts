/**
 * Whether a Claude session may be opened by this bridge, pure: two CLIs on one session file corrupt it,
 * so a session that another process may be writing is not continued (`/resume`) or resumed (the next
 * message after `/handoff`). The shell (`process-scan.ts`) reads `/proc` and the transcript's stat; this
 * decides from what it read.
 *
 * Who may be writing a session:
 * - a `claude` process whose command line names it (`--resume <id>`, `-r <id>`, `--session-id <id>`);
 * - by `cwdRule`, a `claude` that names no session (a fresh one, `--continue`, a `--resume` picker)
 *   running in the session's working directory: `before_write`, one running since before the
 *   transcript was last written (it may be the writer); `any`, whenever it started (after a handoff: a
 *   `claude --continue` just opened at the terminal has written nothing yet, and will). The bridge's own
 *   processes (`own`) never count by this rule: each holds only the session its command line names, or
 *   a new one of its own;
 * - with `growingMs`, anything that wrote the transcript within the last `growingMs` (a process this
 *   machine's `/proc` does not show: another host, another user).
 *
 * The processes in `ignore` (the conversation's own current process, about to be stopped) are left out.
 *
 * One more is nobody else's: a process reading this conversation's own stdin fifo (`fifo`) that the
 * conversation does not hold is an *orphan* — a bridge killed between starting it and recording it. It has
 * been given nothing (the record is written before any line), and no later bridge can adopt it: the shell
 * stops it, where waiting for it to end would hold the conversation for ever.
 */

/** A `claude` process as the shell found it. */
export interface ClaudeProcess {
  pid: number;
  /** Its command line. */
  argv: readonly string[];
  /** Its working directory, when readable. */
  cwd?: string | undefined;
  /** When it started (ms since the epoch), when readable. */
  startedAt?: number | undefined;
  /** Started by this bridge (its stdin is one of the bridge's fifos). */
  own: boolean;
  /** What its stdin is (a fifo's path), when readable. */
  stdin?: string | undefined;
}

/** What the shell read of the session's transcript (absent: no transcript). */
export interface TranscriptStat {
  mtimeMs: number;
  size: number;
}

/** The rules that apply (see the module comment). */
export interface ClaimRules {
  /** Whether (and since when) a `claude` in the working directory that names no session counts. */
  cwdRule: 'off' | 'before_write' | 'any';
  /** A transcript written this recently may still be growing (0: not asked). */
  growingMs: number;
  /** Only a write after this time counts as growth (the bridge's own last write came before it). */
  writtenAfter?: number | undefined;
  /** Pids that do not count. */
  ignore?: readonly number[];
  /** The conversation's own stdin fifo: a process reading it that the conversation does not hold is an orphan. */
  fifo?: string | undefined;
}

/** Nobody else may be writing the session, or who may be. */
export type Claim =
  | { kind: 'free' }
  | { kind: 'process'; pid: number; named: boolean }
  | { kind: 'orphan'; pid: number }
  | { kind: 'growing'; ageMs: number };

/** The flags after which the CLI takes a session id. */
const SESSION_FLAGS = new Set(['--resume', '-r', '--session-id']);

/** The session a `claude` command line names, if it names one. */
export function namedSession(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    if (eq > 0 && SESSION_FLAGS.has(arg.slice(0, eq))) return arg.slice(eq + 1) || undefined;
    if (SESSION_FLAGS.has(arg)) {
      const next = argv[i + 1];
      return next !== undefined && !next.startsWith('-') && next !== '' ? next : undefined;
    }
  }
  return undefined;
}

/**
 * Whether a command line is the Claude CLI's: its binary, `node …/claude-code/cli.js`, or a launcher
 * script named `claude` still running under its shell (npm's and pnpm's `.bin/claude` shims are `sh`
 * scripts that exec the binary a moment later, keeping the pid: a terminal just started is that shim).
 */
export function isClaudeCommand(argv: readonly string[], exe?: string): boolean {
  const base = (path: string | undefined): string => (path ?? '').split('/').pop() ?? '';
  const names = [base(argv[0]), base(exe)];
  if (names.some((name) => /^claude(\.exe)?$/.test(name))) return true;
  if (/^node(js)?$/.test(base(argv[0]))) return /claude-code\/cli\.m?js$|\/claude$/.test(argv[1] ?? '');
  return /^(sh|dash|bash)$/.test(base(argv[0])) && /^claude$/.test(base(argv[1]));
}

/** Who may be writing `sessionId` of `workDir` (see the module comment). */
export function claimOf(
  sessionId: string,
  workDir: string,
  transcript: TranscriptStat | undefined,
  processes: readonly ClaudeProcess[],
  rules: ClaimRules,
  now: number,
): Claim {
  const ignore = new Set(rules.ignore ?? []);
  for (const p of processes) {
    if (ignore.has(p.pid)) continue;
    if (rules.fifo !== undefined && p.stdin === rules.fifo) return { kind: 'orphan', pid: p.pid };
    const named = namedSession(p.argv);
    if (named !== undefined) {
      if (named === sessionId) return { kind: 'process', pid: p.pid, named: true };
      continue;
    }
    if (p.own || rules.cwdRule === 'off' || p.cwd !== workDir) continue;
    // `before_write`: a process that started after the transcript's last write has not written it.
    const since = rules.cwdRule === 'any' ? Number.POSITIVE_INFINITY : transcript?.mtimeMs;
    if (since === undefined || p.startedAt === undefined || p.startedAt <= since)
      return { kind: 'process', pid: p.pid, named: false };
  }
  if (
    transcript &&
    rules.growingMs > 0 &&
    transcript.mtimeMs > (rules.writtenAfter ?? Number.NEGATIVE_INFINITY)
  ) {
    const ageMs = Math.max(0, now - transcript.mtimeMs);
    if (ageMs < rules.growingMs) return { kind: 'growing', ageMs };
  }
  return { kind: 'free' };
}

/** What a chat is told about a session that is not free. */
export function claimText(claim: Exclude<Claim, { kind: 'free' }>): string {
  if (claim.kind === 'growing')
    return `its transcript was written ${Math.round(claim.ageMs / 1000)} s ago and may still be growing (another machine or user?)`;
  if (claim.kind === 'orphan')
    return `a Claude process (pid ${claim.pid}) a stopped bridge started and never recorded is being stopped`;
  return claim.named
    ? `a Claude process (pid ${claim.pid}) is running on it`
    : `a Claude process (pid ${claim.pid}) is running in its directory and may be writing it`;
}

/** How long the next message waits before asking again, after `attempt` asks (backoff, capped). */
export function claimRetryMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
}
