/**
 * `doctor`'s checks of an agent whose bridge runs on another host: the ssh link end to end, in words.
 *
 * The probe is the link itself, once: the same `ssh` arguments as `switchyard link` (`sshLinkArgs`,
 * `BatchMode=yes`, strict host keys, the configured key alone), forwarding a socket *beside* the
 * worker's (`doctor.sock` in the same directory) rather than the worker's own — sshd replaces a socket
 * file it is asked to listen on (`StreamLocalBindUnlink`), and the running link's must not be taken.
 * `-v` makes ssh say "remote forward success" once the worker's sshd listens there: then the login, the
 * host key, the key's `authorized_keys` entry and the socket's directory are all proven, and the probe
 * ends. Otherwise ssh's exit and its words are classified ({@link classifySsh}, a pure table) into
 * what is wrong and what to do.
 *
 * What ssh cannot see, the gateway's record tells (`bridge-peer.json`, the gateway package's
 * `peer-record.ts`): which release on which host connected, and a bridge refused at its handshake for
 * speaking another protocol version. Last, whether the link's own process runs at all.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readPeerRecord } from '@switchyard/gateway';
import { MAX_SOCKET_PATH_BYTES } from '@switchyard/protocol';
import type { AgentConfig } from './agent-config.js';
import type { Finding } from './finding.js';
import { sshLinkArgs } from './link.js';
import type { RemoteBridge } from './remote-bridge-config.js';

/** What is wrong with the link, as ssh's exit and stderr tell it. */
export type SshVerdict =
  | { kind: 'ok' }
  | { kind: 'unresolved' }
  | { kind: 'connection_refused' }
  | { kind: 'unreachable'; detail: string }
  | { kind: 'host_key_unknown' }
  | { kind: 'host_key_changed' }
  | { kind: 'key_unusable'; detail: string }
  | { kind: 'key_refused' }
  | { kind: 'forward_refused' }
  | { kind: 'path_too_long' }
  | { kind: 'other'; detail: string };

/**
 * ssh's words, in the order they are decided: what happened first in a login wins (a key ssh would not
 * load is followed by "Permission denied", which is then not the worker's doing).
 */
const SSH_WORDS = [
  [/Could not resolve hostname/i, () => ({ kind: 'unresolved' })],
  [/Connection refused/i, () => ({ kind: 'connection_refused' })],
  [
    /(Connection timed out|No route to host|Network is unreachable|Operation timed out)/i,
    (m: RegExpMatchArray) => ({ kind: 'unreachable', detail: (m[1] ?? '').toLowerCase() }),
  ],
  [
    /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed/,
    () => ({ kind: 'host_key_changed' }),
  ],
  [/No \S+ host key is known for|Host key verification failed/, () => ({ kind: 'host_key_unknown' })],
  [
    /(Load key "[^"]*": [^\n]+|Identity file \S+ not accessible: [^\n]+|bad permissions)/,
    (m: RegExpMatchArray) => ({ kind: 'key_unusable', detail: (m[1] ?? '').trim() }),
  ],
  [/Permission denied \(/, () => ({ kind: 'key_refused' })],
  [/Bad remote forwarding specification|path too long/i, () => ({ kind: 'path_too_long' })],
  [/remote port forwarding failed/i, () => ({ kind: 'forward_refused' })],
] as const satisfies ReadonlyArray<readonly [RegExp, (m: RegExpMatchArray) => SshVerdict]>;

/**
 * What ssh's run of the probe says: `forwarded` when it printed that the worker listens (the probe was
 * then ended by us, whatever its exit), else the first of {@link SSH_WORDS} found in `stderr`.
 */
export function classifySsh(outcome: {
  forwarded: boolean;
  code: number | null;
  stderr: string;
}): SshVerdict {
  if (outcome.forwarded) return { kind: 'ok' };
  for (const [words, verdict] of SSH_WORDS) {
    const match = outcome.stderr.match(words);
    if (match) return verdict(match);
  }
  const last = outcome.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('debug'))
    .at(-1);
  return { kind: 'other', detail: `ssh exited with ${outcome.code ?? 'a signal'}${last ? `: ${last}` : ''}` };
}

/** A verdict in words, with what to do; `probe` is the socket the doctor asked the worker to listen on. */
export function describeSsh(verdict: SshVerdict, remote: RemoteBridge, probe: string): Omit<Finding, 'path'> {
  const { host, ssh } = remote;
  const at = `${ssh.user}@${host}:${ssh.port}`;
  switch (verdict.kind) {
    case 'ok':
      return {
        level: 'ok',
        message: `ssh to ${at} logs in with ${ssh.identityFile}, and the worker's sshd listens beside ${remote.socketPath}`,
      };
    case 'unresolved':
      return {
        level: 'error',
        message: `the worker host ${host} cannot be resolved from here`,
        fix: 'check bridge.host (a name this host resolves, or an address), DNS or /etc/hosts',
      };
    case 'connection_refused':
      return {
        level: 'error',
        message: `nothing accepts ssh at ${host} port ${ssh.port} (connection refused): sshd does not run there, or the port is wrong`,
        fix: `check bridge.ssh.port, and that sshd runs on ${host} (systemctl status ssh)`,
      };
    case 'unreachable':
      return {
        level: 'error',
        message: `the worker host ${host} is unreachable on port ${ssh.port} (${verdict.detail})`,
        fix: `check the network and any firewall between this host and ${host} (ssh port ${ssh.port})`,
      };
    case 'host_key_unknown':
      return {
        level: 'error',
        message: `${ssh.knownHosts} holds no host key for ${host} port ${ssh.port}, and the link checks host keys strictly`,
        fix: `ssh-keyscan -p ${ssh.port} ${host} >> ${ssh.knownHosts}, then compare its fingerprint (ssh-keygen -lf ${ssh.knownHosts}) with ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on ${host}`,
      };
    case 'host_key_changed':
      return {
        level: 'error',
        message: `the host key of ${host} port ${ssh.port} is not the one in ${ssh.knownHosts}: the worker was reinstalled, or someone is in between`,
        fix: `if ${host} was reinstalled, check its new fingerprint on that host, then ssh-keygen -f ${ssh.knownHosts} -R '[${host}]:${ssh.port}' (or -R ${host} for port 22) and ssh-keyscan it again; otherwise do not connect`,
      };
    case 'key_unusable':
      return {
        level: 'error',
        message: `ssh will not use the key ${ssh.identityFile} (${verdict.detail})`,
        fix: `the key must exist, be readable by the link's user and be 0600: chmod 600 ${ssh.identityFile} (or ssh-keygen -t ed25519 -N '' -f ${ssh.identityFile})`,
      };
    case 'key_refused':
      return {
        level: 'error',
        message: `${host} refused the key ${ssh.identityFile} for user ${ssh.user} (Permission denied)`,
        fix: `on ${host}, put "restrict,port-forwarding " and the content of ${ssh.identityFile}.pub in ~${ssh.user}/.ssh/authorized_keys (0600, in a 0700 .ssh owned by ${ssh.user}); check bridge.ssh.user`,
      };
    case 'path_too_long':
      return {
        level: 'error',
        message: `the worker's socket path ${remote.socketPath} is too long for a Unix socket (at most ${MAX_SOCKET_PATH_BYTES} bytes)`,
        fix: 'set bridge.socket to a shorter path on the worker',
      };
    case 'forward_refused':
      return {
        level: 'error',
        message: `${host}'s sshd logged ${ssh.user} in but would not listen on ${probe}: the directory ${path.dirname(remote.socketPath)} is missing there or not ${ssh.user}'s, or that sshd does not let ${ssh.user} forward Unix sockets`,
        fix: `on ${host}: start the bridge once (it creates the directory) or install -d -o ${ssh.user} -m 0700 ${path.dirname(remote.socketPath)}; and give ${ssh.user} the Match block of deploy/README.md (AllowStreamLocalForwarding remote, AllowTcpForwarding remote, StreamLocalBindUnlink yes); sshd's log there says which`,
      };
    case 'other':
      return {
        level: 'error',
        message: `ssh to ${at} failed: ${verdict.detail}`,
        fix: `run the link's ssh by hand to see more: ssh -v -F none -i ${ssh.identityFile} -o UserKnownHostsFile=${ssh.knownHosts} -p ${ssh.port} ${ssh.user}@${host}`,
      };
  }
}

/** The socket the probe forwards: beside the worker's, as long as its name allows. */
export function probeSocketPath(remote: RemoteBridge): string {
  const dir = path.dirname(remote.socketPath);
  const name =
    Buffer.byteLength(path.join(dir, 'doctor.sock')) <= MAX_SOCKET_PATH_BYTES ? 'doctor.sock' : 'd.sock';
  return path.join(dir, name);
}

/** Runs the probe once; resolves with what ssh did (at most `timeoutMs`, then it is ended as unreachable). */
export async function probeLink(
  remote: RemoteBridge,
  options: { ssh?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ forwarded: boolean; code: number | null; stderr: string }> {
  const local = mkdtempSync(path.join(tmpdir(), 'sy-doctor-'));
  try {
    // The gateway's end of the probe: nothing listens there and nothing on the worker connects to it.
    const args = [
      '-v',
      ...sshLinkArgs({ ...remote, socketPath: probeSocketPath(remote) }, path.join(local, 'p')),
    ];
    return await new Promise((resolve) => {
      const child = spawn(options.ssh ?? 'ssh', args, {
        env: options.env ?? process.env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      let forwarded = false;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, options.timeoutMs ?? 15_000);
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-20_000);
        if (!forwarded && /remote forward success for: listen/.test(stderr)) {
          forwarded = true;
          child.kill('SIGTERM');
        }
      });
      child.on('error', (err) => {
        stderr += `\n${err.message}`;
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({
          forwarded,
          code,
          stderr:
            timedOut && !forwarded
              ? `${stderr}\nOperation timed out (no answer within the probe's time)`
              : stderr,
        });
      });
    });
  } finally {
    rmSync(local, { recursive: true, force: true });
  }
}

/** What else is known from here: the gateway's record of its peer, and whether the link runs. */
export function peerFindings(
  agent: AgentConfig,
  index: number,
  gatewayStateDir: string,
  link: { running: boolean; how: string },
): Finding[] {
  const remote = agent.bridge;
  if (!remote) return [];
  const at = `agents[${index}].bridge`;
  const findings: Finding[] = [];
  findings.push(
    link.running
      ? { level: 'ok', path: at, message: `the link runs (${link.how})` }
      : {
          level: 'warn',
          path: at,
          message: `the link to ${remote.host} is not running (${link.how}), so the bridge there cannot reach the gateway`,
          fix: `systemctl enable --now switchyard-link@${agent.name} (or switchyard run ${agent.name}, which runs the gateway and the link)`,
        },
  );
  const record = existsSync(gatewayStateDir) ? readPeerRecord(gatewayStateDir) : undefined;
  if (
    record?.refused?.code === 'version_mismatch' &&
    !(record.connected && record.since > record.refused.at)
  ) {
    findings.push({
      level: 'error',
      path: at,
      message: `the gateway refused the bridge: ${record.refused.message}`,
      fix: `install the same Switchyard release on ${remote.host} as here (deploy/README.md, "Install"), then systemctl restart switchyard-agent@${agent.name} there`,
    });
  }
  if (record?.connected && record.peer) {
    const { host, release } = record.peer;
    findings.push({
      level: 'ok',
      path: at,
      message: `the bridge is connected${host ? ` from ${host}` : ''}${release ? `, release ${release}` : ''}${
        record.roundTrip ? `; round trip ${record.roundTrip.ms} ms` : ''
      }`,
    });
  } else if (record && !record.connected && link.running) {
    findings.push({
      level: 'warn',
      path: at,
      message: `no bridge is connected through the link${record.peer?.host ? ` (the last came from ${record.peer.host})` : ''}`,
      fix: `on ${remote.host}: systemctl status switchyard-agent@${agent.name}; its log says why it does not connect`,
    });
  }
  return findings;
}
