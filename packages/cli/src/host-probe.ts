/**
 * What the operator commands read of the host about one agent, without talking to it: which of its
 * service processes run (from `/proc/<pid>/cmdline`, so dev supervisors and systemd units alike are
 * found), how long they have run, and whether the bridge is connected to the gateway's socket (an
 * accepted connection on that path in `/proc/net/unix`). Linux only, like the services.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { readStartTime } from '@switchyard/agent-bridge';

/** A running process of one of the agent's services. */
export interface ServiceProcess {
  pid: number;
  /** Seconds since it started, from `/proc/<pid>/stat` and `/proc/uptime`. */
  uptimeSeconds: number | undefined;
}

/** Kernel clock ticks a second (`getconf CLK_TCK`); 100 on every Linux Switchyard targets. */
const CLOCK_TICKS = 100;

/**
 * The processes running `switchyard … <service> <agent>` (the `gateway`/`bridge` subcommands), found by
 * their argv: an element ending in `main.js` or `switchyard`, later `<service>` then `<agent>`. With
 * `configFile`, only those of that config: an agent is a name *in a config*, and two configs on one host
 * (a test run beside a deployment, two checkouts) may both name theirs `main`. A process whose config
 * cannot be told (its environment unreadable) is counted, as before.
 */
export function findServiceProcesses(
  service: 'gateway' | 'bridge' | 'link',
  agent: string,
  configFile?: string,
): ServiceProcess[] {
  const found: ServiceProcess[] = [];
  for (const entry of safeReaddir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone, or not ours to read
    }
    if (!isServiceArgv(argv, service, agent)) continue;
    if (configFile !== undefined) {
      const theirs = configOf(pid, argv);
      if (theirs !== undefined && theirs !== path.resolve(configFile)) continue;
    }
    found.push({ pid, uptimeSeconds: uptimeOf(pid) });
  }
  return found;
}

/**
 * The config file a switchyard process resolved, as the CLI resolves it (`--config PATH`, else
 * `$SWITCHYARD_CONFIG`, else `./switchyard.yaml`, relative to the process's working directory);
 * undefined when its working directory or environment cannot be read.
 */
export function configOf(pid: number, argv: readonly string[]): string | undefined {
  let cwd: string;
  let environ: string[];
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`);
    environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
  let chosen: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--config' && argv[i + 1] !== undefined) chosen = argv[i + 1];
    else if (arg.startsWith('--config=')) chosen = arg.slice('--config='.length);
  }
  chosen ??= environ.find((v) => v.startsWith('SWITCHYARD_CONFIG='))?.slice('SWITCHYARD_CONFIG='.length);
  return path.resolve(cwd, chosen || 'switchyard.yaml');
}

/** Whether `argv` runs `service` for `agent` through the switchyard command. */
export function isServiceArgv(argv: readonly string[], service: string, agent: string): boolean {
  const entry = argv.findIndex((arg) => /(?:^|\/)(?:main\.js|switchyard)$/.test(arg));
  if (entry < 0) return false;
  for (let i = entry + 1; i < argv.length - 1; i++) {
    if (argv[i] === service && argv[i + 1] === agent) return true;
  }
  return false;
}

/** Seconds `pid` has been running, or undefined when `/proc` will not say. */
export function uptimeOf(pid: number): number | undefined {
  const start = readStartTime(pid);
  if (!start.ok) return undefined;
  try {
    const bootSeconds = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    return Math.max(0, Math.round(bootSeconds - Number(start.startTime) / CLOCK_TICKS));
  } catch {
    return undefined;
  }
}

/**
 * How many connections the listening socket at `socketPath` has accepted and still holds open
 * (`/proc/net/unix` rows with that path in state 03, connected); undefined when the table is unreadable.
 */
export function acceptedConnections(socketPath: string): number | undefined {
  let table: string;
  try {
    table = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return undefined;
  }
  return countAccepted(table, socketPath);
}

/** {@link acceptedConnections} over the text of `/proc/net/unix`. */
export function countAccepted(table: string, socketPath: string): number {
  let n = 0;
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // Num RefCount Protocol Flags Type St Inode Path
    if (fields[5] === '03' && fields.slice(7).join(' ') === socketPath) n++;
  }
  return n;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
