/**
 * The probing half of the session claim (`core/terminal/session-claim.ts` decides): the `claude` processes this
 * machine's `/proc` shows, and the stat of a session's transcript. Linux only: where `/proc` is missing
 * the scan finds no process, and only the transcript's growth speaks (the claim rules' `growingMs`).
 * Processes of other users show no working directory or stdin; they count by their command line only.
 */
import { readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Claim,
  type ClaimRules,
  type ClaudeProcess,
  claimOf,
  isClaudeCommand,
} from '../../core/terminal/session-claim.js';
import { otherPids } from '../process/proc.js';
import { projectDir } from '../transcript/files.js';

/** Clock ticks per second of `/proc/<pid>/stat`'s start time (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** The boot time (ms since the epoch), from `/proc/stat`; undefined where it cannot be read. */
function bootTimeMs(): number | undefined {
  try {
    const line = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    return line ? Number(line[1]) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every live `claude` process but this one; `own` marks those whose stdin is a fifo under
 * `conversationsDir` (the bridge's `<stateDir>/conversations`: started by this bridge).
 */
export function claudeProcesses(conversationsDir: string): ClaudeProcess[] {
  const pids = otherPids();
  if (pids.length === 0) return [];
  const boot = bootTimeMs();
  const ownPrefix = conversationsDir.replace(/\/+$/, '');
  const found: ClaudeProcess[] = [];
  for (const name of pids.map(String)) {
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      while (argv.length > 0 && argv[argv.length - 1] === '') argv.pop();
      const exe = readable(() => readlinkSync(`/proc/${name}/exe`));
      if (argv.length === 0 || !isClaudeCommand(argv, exe)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      const ticks = Number(fields[19]);
      const stdin = readable(() => readlinkSync(`/proc/${name}/fd/0`));
      found.push({
        pid: Number(name),
        argv,
        cwd: readable(() => readlinkSync(`/proc/${name}/cwd`)),
        startedAt: boot !== undefined && Number.isFinite(ticks) ? boot + (ticks * 1000) / USER_HZ : undefined,
        own: stdin?.startsWith(`${ownPrefix}/`) === true,
        stdin,
      });
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return found;
}

/** The stat of a session's transcript in `configDir`, undefined when it has none. */
export function transcriptStat(
  configDir: string,
  workDir: string,
  sessionId: string,
): { mtimeMs: number; size: number } | undefined {
  try {
    const stat = statSync(join(projectDir(configDir, workDir), `${sessionId}.jsonl`));
    return stat.isFile() ? { mtimeMs: stat.mtimeMs, size: stat.size } : undefined;
  } catch {
    return undefined;
  }
}

/** Probes and decides who may be writing `sessionId` of `workDir` (see `core/terminal/session-claim.ts`). */
export function probeClaim(
  where: { conversationsDir: string; configDir: string; workDir: string },
  sessionId: string,
  rules: ClaimRules,
  now: number,
  processes: readonly ClaudeProcess[] = claudeProcesses(where.conversationsDir),
): Claim {
  const transcript = transcriptStat(where.configDir, where.workDir, sessionId);
  return claimOf(sessionId, where.workDir, transcript, processes, rules, now);
}

function readable(read: () => string): string | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
