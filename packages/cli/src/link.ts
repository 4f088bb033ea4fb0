/**
 * The link of an agent whose bridge runs on another host: one OpenSSH client on the gateway's host that
 * logs in to the worker and has its sshd listen on the worker's socket (`-R WORKER_SOCKET:GATEWAY_SOCKET`),
 * so each connection the bridge makes there reaches the gateway's socket here. Nothing of the protocol
 * changes: the bridge connects and reconnects as it would locally, and the channel's handshake resends
 * whatever a dropped link lost (seq/ack), so the link itself keeps no state.
 *
 * The supervisor here keeps one `ssh` running: when it exits (the network dropped, sshd restarted, the
 * forward could not be set up) it is started again after a backoff that doubles from
 * {@link LINK_BACKOFF} `.initialMs` to `.maxMs`, and starts afresh once a client stayed up for
 * `.healthyMs`. `ExitOnForwardFailure` makes a forward that failed an exit rather than a login that
 * carries nothing; `ServerAliveInterval` makes a silent network an exit within three intervals.
 *
 * Which side dials, and why (the key is the gateway host's, the worker holds only its public half and
 * no secret of the gateway's), is in deploy/README.md, "An agent's bridge on another host".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type Clock, describeError, type Logger, systemClock, type TimerHandle } from '@switchyard/protocol';
import type { RemoteBridge } from './remote-bridge-config.js';

/** The ssh client's arguments that carry `gatewaySocket` to `remote.socketPath` on the worker host. */
export function sshLinkArgs(remote: RemoteBridge, gatewaySocket: string): string[] {
  const { ssh } = remote;
  return [
    // No user or system ssh_config: what the link does is what Switchyard's config says, on any host.
    '-F',
    'none',
    '-N',
    '-T',
    '-o',
    'BatchMode=yes',
    '-o',
    'ExitOnForwardFailure=yes',
    '-o',
    `ServerAliveInterval=${ssh.aliveIntervalSeconds}`,
    '-o',
    'ServerAliveCountMax=3',
    '-o',
    'ConnectTimeout=10',
    // For -R the worker's sshd decides whether a stale socket file is replaced (its own
    // StreamLocalBindUnlink, deploy/README.md); this one applies to the client's side only.
    '-o',
    'StreamLocalBindUnlink=yes',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${ssh.knownHosts}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-i',
    ssh.identityFile,
    '-p',
    String(ssh.port),
    '-l',
    ssh.user,
    '-R',
    `${remote.socketPath}:${gatewaySocket}`,
    // After "--" nothing can be read as an option, whatever the host is called.
    '--',
    remote.host,
  ];
}

/** How the link waits before starting ssh again. */
export const LINK_BACKOFF = { initialMs: 250, maxMs: 10_000, healthyMs: 10_000 } as const;

/** What {@link createLink} needs. */
export interface LinkOptions {
  /** The program and its arguments (`ssh` and {@link sshLinkArgs}). */
  command: string;
  args: readonly string[];
  logger: Logger;
  /** The ssh client's environment: this process's, minus what the gateway alone may read. */
  env?: NodeJS.ProcessEnv;
  backoff?: { initialMs: number; maxMs: number; healthyMs: number };
  clock?: Clock;
}

/** A running link: `stop()` resolves once the ssh client has exited. */
export interface Link {
  start(): void;
  stop(): Promise<void>;
  /** The ssh client's pid while one runs. */
  readonly pid: number | undefined;
  /** How many times ssh was started. */
  readonly starts: number;
}

/** Creates the link's supervisor; nothing runs until `start()`. */
export function createLink(options: LinkOptions): Link {
  const log = options.logger.child({ component: 'link' });
  const clock = options.clock ?? systemClock;
  const backoff = options.backoff ?? LINK_BACKOFF;
  let child: ChildProcess | undefined;
  let stopping = false;
  let failures = 0;
  let starts = 0;
  let timer: TimerHandle | undefined;

  const launch = (): void => {
    timer = undefined;
    if (stopping) return;
    const startedAt = clock.now();
    starts++;
    const ssh = spawn(options.command, [...options.args], {
      env: options.env ?? process.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = ssh;
    let stderr = '';
    ssh.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2_000);
    });
    log.info({ event: 'link_started', childPid: ssh.pid }, 'ssh link started');
    ssh.on('error', (err) =>
      log.error({ event: 'link_spawn_failed', err: describeError(err) }, 'spawn failed'),
    );
    ssh.on('close', (code, signal) => {
      if (child === ssh) child = undefined;
      if (stopping) return;
      failures = clock.now() - startedAt >= backoff.healthyMs ? 0 : failures + 1;
      const delay = failures === 0 ? 0 : Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));
      log.warn(
        { event: 'link_exited', code, signal, said: stderr.trim().split('\n').slice(-3), restartInMs: delay },
        'ssh link ended; starting it again',
      );
      timer = clock.setTimeout(launch, delay);
    });
  };

  return {
    get pid() {
      return child?.pid;
    },
    get starts() {
      return starts;
    },
    start() {
      stopping = false;
      if (!child && !timer) launch();
    },
    async stop() {
      stopping = true;
      clock.clearTimeout(timer);
      timer = undefined;
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => running.once('close', () => resolve()));
      running.kill('SIGTERM');
      const kill = clock.setTimeout(() => running.kill('SIGKILL'), 5_000);
      await gone;
      clock.clearTimeout(kill);
    },
  };
}
