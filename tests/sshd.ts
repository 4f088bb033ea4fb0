/**
 * A real OpenSSH server for the tests of a bridge on another host: Debian's `/usr/sbin/sshd` started by
 * the test on 127.0.0.1 and a free port, as the current user, with a config, host key, user key and
 * authorized_keys of its own in a temp directory (no PAM, no strict modes, nothing of the machine's
 * sshd touched). `stop()` ends the server and every session process it forked, so nothing outlives the
 * test. Where sshd is not installed, {@link sshdAvailable} is false and the tests skip (`.ci/run`
 * installs `openssh-server`).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { liveProcesses } from './processes.js';

/** Debian's sshd. */
export const SSHD = '/usr/sbin/sshd';

/** Whether a real sshd and ssh-keygen are here. */
export const sshdAvailable =
  existsSync(SSHD) && existsSync('/usr/bin/ssh-keygen') && existsSync('/usr/bin/ssh');

/** A running sshd and what a client needs to log in to it. */
export interface TestSshd {
  port: number;
  user: string;
  /** The private key whose public half is authorized (0600). */
  identityFile: string;
  /** A known_hosts file holding this server's host key for 127.0.0.1 and its port. */
  knownHosts: string;
  /** The server's log (its stderr, `-e`), for failure messages. */
  log(): string;
  /** Ends sshd and the session processes it forked; resolves when they are gone. Idempotent. */
  stop(): Promise<void>;
  /** Starts it again after `stop`, on the same port with the same keys (an sshd restart); resolves once it listens. */
  start(): Promise<void>;
}

/** A TCP port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A new ed25519 key pair at `file` (and `file.pub`), without a passphrase. */
export function sshKeygen(file: string, comment = 'switchyard-test'): void {
  execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
}

/** Starts an sshd of the test's own under `dir` (created); resolves once it accepts connections. */
export async function startSshd(dir: string): Promise<TestSshd> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const hostKey = path.join(dir, 'host_ed25519');
  const identityFile = path.join(dir, 'id_ed25519');
  for (const key of [hostKey, identityFile]) sshKeygen(key);
  const user = userInfo().username;
  const port = await freePort();
  const authorized = path.join(dir, 'authorized_keys');
  // As deploy/README.md says to write it: this key may forward, and do nothing else.
  writeFileSync(authorized, `restrict,port-forwarding ${readFileSync(`${identityFile}.pub`, 'utf8')}`, {
    mode: 0o600,
  });
  const knownHosts = path.join(dir, 'known_hosts');
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${readFileSync(`${hostKey}.pub`, 'utf8')}`);
  const config = path.join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      `AllowUsers ${user}`,
      'UsePAM no',
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      'AllowStreamLocalForwarding yes',
      // OpenSSH applies AllowTcpForwarding to Unix-socket forwards too: "remote" lets -R through, PermitListen
      // none refuses a TCP -R, PermitOpen none keeps -L out.
      'AllowTcpForwarding remote',
      'PermitListen none',
      'PermitOpen none',
      // deploy/README.md asks the worker's sshd for this: a socket file a dropped link left is replaced.
      'StreamLocalBindUnlink yes',
      'ClientAliveInterval 5',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  // Run as root, sshd insists on its privilege separation directory (systemd makes it for its unit).
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  let log = '';
  /** One sshd process on the config: resolves once it accepts connections. */
  const launch = async (): Promise<{ child: ChildProcess; exited: Promise<void> }> => {
    const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', config], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const until = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`sshd exited at start: ${log}`);
      const up = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (up) return { child, exited };
      if (Date.now() > until) throw new Error(`sshd did not listen on ${port}: ${log}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** Ends the listener and the sessions it forked; resolves when they are gone. */
  const end = async ({ child, exited }: { child: ChildProcess; exited: Promise<void> }): Promise<void> => {
    const pid = child.pid;
    // The sessions it forked outlive the listener: find them (by parent) before it goes.
    const tree = pid === undefined ? [] : descendants(pid);
    child.kill('SIGTERM');
    for (const p of tree) {
      try {
        process.kill(p, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await exited;
    const deadline = Date.now() + 5_000;
    while (tree.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const p of tree.filter(alive)) process.kill(p, 'SIGKILL');
  };
  let running: { child: ChildProcess; exited: Promise<void> } | undefined = await launch();
  return {
    port,
    user,
    identityFile,
    knownHosts,
    log: () => log,
    async stop() {
      if (running) await end(running);
      running = undefined;
    },
    async start() {
      if (!running) running = await launch();
    },
  };
}

/** Every live descendant of `pid`. */
export function descendants(pid: number): number[] {
  const all = liveProcesses();
  const found: number[] = [];
  const walk = (parent: number): void => {
    for (const p of all) {
      if (p.ppid === parent) {
        found.push(p.pid);
        walk(p.pid);
      }
    }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A test file's own sshd: started before its tests in a temp directory, stopped after them, and checked
 * to leave no process behind (no sshd, no ssh client, no session of either). Read `sshd()` inside a test.
 */
export function sshdPerFile(): { sshd(): TestSshd; dir(): string } {
  let server: TestSshd | undefined;
  let dir = '';
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sy-sshd-'));
    server = await startSshd(dir);
  });
  afterAll(async () => {
    await server?.stop();
    const left = liveProcesses().filter((p) => p.command.includes(dir));
    rmSync(dir, { recursive: true, force: true });
    expect(left.map((p) => p.command)).toEqual([]);
  });
  return {
    sshd() {
      if (!server) throw new Error('sshd is not started: read it inside a test');
      return server;
    },
    dir: () => dir,
  };
}
