/**
 * Looking at this machine's processes through /proc, for tests that must prove nothing they started
 * outlives them, and find a service's process by its parent; and what a child a test started printed.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Everything `child` (spawned with piped stdout and stderr) prints from now on, read when asked. */
export function outputOf(child: ChildProcess): { out(): string; err(): string } {
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return { out: () => out, err: () => err };
}

/** A live (not zombie) process as /proc shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The command line, arguments joined by spaces. */
  command: string;
  /** Its working directory, or '' when it is not ours to read. */
  cwd: string;
}

/** Every live process except this one; zombies (already dead, waiting to be reaped) are left out. */
export function liveProcesses(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${name}/cwd`);
      } catch {
        // not ours to read
      }
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      found.push({ pid: Number(name), ppid: Number(fields[1]), command, cwd });
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Live processes working inside `dir` or naming it on their command line. */
export function processesOf(dir: string): ProcessInfo[] {
  return liveProcesses().filter(
    (p) => p.command.includes(dir) || p.cwd === dir || p.cwd.startsWith(`${dir}/`),
  );
}

/** SIGKILLs the given processes; returns those that were still there to kill. */
export function killAll(found: ProcessInfo[]): ProcessInfo[] {
  return found.filter((p) => {
    try {
      process.kill(p.pid, 'SIGKILL');
      return true;
    } catch {
      return false;
    }
  });
}
