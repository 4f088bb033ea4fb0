/**
 * An agent's `bridge:` block: its bridge runs on another host (the worker, beside its Claude processes,
 * working directory and transcripts), joined to the gateway's socket by OpenSSH (`link.ts`):
 *
 * ```yaml
 * bridge:
 *   host: build-box                        # the worker host, as ssh reaches it from the gateway's host
 *   socket: /var/lib/switchyard/demo/bridge/link.sock   # on the worker; default <stateDir>/bridge/link.sock
 *   ssh:
 *     user: sy-demo                        # default sy-<agent>: the agent's user on the worker
 *     port: 22
 *     identityFile: /etc/switchyard/ssh/demo.key      # on the gateway's host: the key that logs in there
 *     knownHosts: /etc/switchyard/ssh/known_hosts     # the worker's host key, checked strictly
 * ```
 *
 * The gateway's host dials (deploy/README.md, "An agent's bridge on another host", says why), so the key
 * and the known host are files of the gateway's host; the worker holds only the public half. The same
 * config file serves both hosts: the worker's bridge reads `socket` from it. Because the file is copied
 * to the worker, no secret of the gateway's may be written in it (see {@link remoteSecretProblems}).
 *
 * Validated here with messages that say what to change; resolved to {@link RemoteBridge}.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { MAX_SOCKET_PATH_BYTES } from '@switchyard/protocol';
import { z } from 'zod';
import type { Finding } from './finding.js';

// A host or user that began with "-" would reach ssh as an option (-oProxyCommand=…): refused here.
const sshHost = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/, {
  error:
    'expected a host name or address as ssh reaches it (letters, digits, ".", "-", ":"; not starting with "-")',
});
const sshUser = z.string().regex(/^[a-z_][a-z0-9_.-]*$/, {
  error: 'expected the login name on the worker host (lowercase, like sy-demo)',
});

/** The `bridge:` block as written. */
export const bridgeSchema = z.strictObject({
  host: sshHost,
  socket: z
    .string()
    .regex(/^\/[^:]*$/, { error: 'expected an absolute path on the worker host, without ":"' })
    .optional(),
  ssh: z.strictObject(
    {
      user: sshUser.optional(),
      port: z.number({ error: 'expected a TCP port (1-65535)' }).int().min(1).max(65535).optional(),
      identityFile: z.string().min(1, {
        error:
          "expected the private key the gateway's host logs in to the worker with (ssh-keygen -t ed25519 -f FILE)",
      }),
      knownHosts: z.string().min(1, {
        error: "expected a known_hosts file holding the worker's host key (ssh-keyscan -H HOST >> FILE)",
      }),
      /** Seconds between ssh's keep-alives; three unanswered ones end the link (default 5). */
      aliveIntervalSeconds: z.number().int().min(1).max(300).optional(),
    },
    { error: 'expected ssh: { identityFile, knownHosts } (and optionally user, port)' },
  ),
});

/** Where an agent's bridge runs when it is not beside its gateway, with every default applied. */
export interface RemoteBridge {
  host: string;
  /** The socket the bridge connects to on the worker host; ssh listens there for the gateway's. */
  socketPath: string;
  ssh: {
    user: string;
    port: number;
    /** Absolute, on the gateway's host. */
    identityFile: string;
    /** Absolute, on the gateway's host. */
    knownHosts: string;
    aliveIntervalSeconds: number;
  };
}

/** Resolves a validated `bridge:` block; relative key paths are taken from `base` (the config's directory). */
export function resolveRemoteBridge(
  raw: z.infer<typeof bridgeSchema> | undefined,
  agent: { name: string; stateDir: string },
  base: string,
): RemoteBridge | undefined {
  if (raw === undefined) return undefined;
  return {
    host: raw.host,
    socketPath: raw.socket ?? path.join(agent.stateDir, 'bridge', 'link.sock'),
    ssh: {
      user: raw.ssh.user ?? `sy-${agent.name}`,
      port: raw.ssh.port ?? 22,
      identityFile: path.resolve(base, raw.ssh.identityFile),
      knownHosts: path.resolve(base, raw.ssh.knownHosts),
      aliveIntervalSeconds: raw.ssh.aliveIntervalSeconds ?? 5,
    },
  };
}

/** What a remote bridge's config must not be started with, each a sentence with its fix. */
export function remoteBridgeProblems(
  agent: {
    name: string;
    socketPath: string;
    bridge: RemoteBridge | undefined;
    token: { kind: string } | undefined;
    webhooks: { hooks: ReadonlyArray<{ name: string; secret: { kind: string } }> } | undefined;
    voice: { kind: 'http'; key: { kind: string } | undefined } | { kind: 'command' } | undefined;
  },
  index: number,
): string[] {
  const remote = agent.bridge;
  if (!remote) return [];
  const at = `agents[${index}]`;
  const problems: string[] = [];
  const bytes = Buffer.byteLength(remote.socketPath);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    problems.push(
      `${at}.bridge.socket: the worker's socket path ${remote.socketPath} is ${bytes} bytes, over the ${MAX_SOCKET_PATH_BYTES}-byte limit; set bridge.socket to a shorter path`,
    );
  }
  // ssh's -R takes "REMOTE:LOCAL": a colon in the gateway's path would split it in the wrong place.
  if (agent.socketPath.includes(':')) {
    problems.push(
      `${at}.runtimeDir: the socket path ${agent.socketPath} holds ":", which ssh's forwarding cannot carry; choose a runtimeDir without it`,
    );
  }
  const copied =
    'is in the config file, which the worker host holds too (its bridge reads it), and no secret of the gateway may reach that host';
  if (agent.token?.kind === 'inline') {
    problems.push(
      `${at}.token: the inline bot token ${copied}: write token: { credential: telegram-token } (or { file: PATH } on the gateway's host)`,
    );
  }
  const hooks = (agent.webhooks?.hooks ?? []).filter((h) => h.secret.kind === 'inline').map((h) => h.name);
  if (hooks.length > 0) {
    problems.push(
      `${at}.webhooks: the inline secret of webhook ${hooks.join(', ')} ${copied}: write secret: { credential: NAME } or { file: PATH }`,
    );
  }
  if (agent.voice?.kind === 'http' && agent.voice.key?.kind === 'inline') {
    problems.push(
      `${at}.voice.key: the inline key ${copied}: write key: { credential: NAME } or { file: PATH }`,
    );
  }
  return problems;
}

/**
 * `config check`'s findings about a remote bridge's ssh files on this host. They are the gateway host's
 * files: on the worker they are absent by design, so a missing one is a warning, not an error.
 */
export function remoteBridgeFindings(remote: RemoteBridge | undefined, index: number): Finding[] {
  if (!remote) return [];
  const at = `agents[${index}].bridge`;
  const { ssh } = remote;
  const findings: Finding[] = [
    {
      level: 'ok',
      path: at,
      message: `the bridge runs on ${remote.host}, reached as ${ssh.user}@${remote.host}:${ssh.port}; its socket there is ${remote.socketPath}`,
    },
    {
      level: 'ok',
      path: at,
      message:
        'files cross the link as protocol transfers (chunked, checksummed, resumed after a dropped link): ' +
        'attachments users send and files the agent sends; each host keeps its own exchange directory (<stateDir>/files)',
    },
  ];
  const file = (field: string, what: string, name: string, fix: string): void => {
    let mode: number;
    try {
      accessSync(name, constants.R_OK);
      mode = statSync(name).mode;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      findings.push({
        level: 'warn',
        path: `${at}.ssh.${field}`,
        message: `${what} ${name} cannot be read (${code}); the gateway's host needs it (the worker does not)`,
        fix,
      });
      return;
    }
    // ssh refuses a private key others may read: say so before the link fails on it.
    if (field === 'identityFile' && (mode & 0o077) !== 0) {
      findings.push({
        level: 'error',
        path: `${at}.ssh.${field}`,
        message: `${what} ${name} is readable by others (mode ${(mode & 0o777).toString(8)}), and ssh refuses such a key`,
        fix: `chmod 600 ${name}`,
      });
      return;
    }
    findings.push({ level: 'ok', path: `${at}.ssh.${field}`, message: `${what} ${name}` });
  };
  file(
    'identityFile',
    'the ssh key',
    ssh.identityFile,
    `ssh-keygen -t ed25519 -N '' -f ${ssh.identityFile}, then put ${ssh.identityFile}.pub in ~${ssh.user}/.ssh/authorized_keys on ${remote.host}`,
  );
  file(
    'knownHosts',
    'the known hosts file',
    ssh.knownHosts,
    `ssh-keyscan -p ${ssh.port} ${remote.host} >> ${ssh.knownHosts}`,
  );
  return findings;
}
