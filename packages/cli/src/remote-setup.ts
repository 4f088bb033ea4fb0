/**
 * `add-agent`'s part for a bridge on another host (`--bridge-host`): on the gateway's host the key that
 * logs in to the worker (generated when missing, the link's user's alone), the worker's host key learnt
 * into the known-hosts file, the link's unit enabled; for the worker, what it needs and nothing more —
 * its config entry without the gateway's secrets, the `authorized_keys` line that lets the key forward
 * and do nothing else, the sshd `Match` block, and the steps — printed, or written under `--worker-root`
 * in the layout of the worker's `/` (to copy there).
 *
 * No secret of the gateway's reaches the worker: its config holds this agent's entry alone (another
 * agent's inline token stays here) with `token`, `webhooks` and `voice` removed (the bridge reads none
 * of them), and the private key never leaves this host — only its public half is in the worker's files.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';

const run = promisify(execFile);

/** What the operator said of the worker (add-agent's flags). */
export interface RemoteSetupOptions {
  host: string;
  user?: string | undefined;
  port?: number | undefined;
  identityFile?: string | undefined;
  knownHosts?: string | undefined;
  /** Write the worker's files under this directory instead of printing them. */
  workerRoot?: string | undefined;
}

/** The `bridge:` block of a new entry: the key and known hosts in `<etc>/ssh` unless named. */
export function bridgeBlock(
  name: string,
  etcDir: string,
  options: RemoteSetupOptions,
): Record<string, unknown> {
  return {
    host: options.host,
    ssh: {
      user: options.user ?? `sy-${name}`,
      port: options.port ?? 22,
      identityFile: options.identityFile ?? path.join(etcDir, 'ssh', `${name}.key`),
      knownHosts: options.knownHosts ?? path.join(etcDir, 'ssh', 'known_hosts'),
    },
  };
}

/** The keys of an agent's entry that may hold a gateway secret, and that a bridge never reads. */
const GATEWAY_ONLY_KEYS = ['token', 'webhooks', 'voice'] as const;

/** The agent's entry as the worker's config holds it: everything but what only the gateway reads. */
export function workerEntry(entry: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...entry };
  for (const key of GATEWAY_ONLY_KEYS) delete copy[key];
  return copy;
}

/** The worker's `authorized_keys` line: this key may open the link's forward, and nothing else. */
export function authorizedKeysLine(publicKey: string): string {
  // restrict: no shell, pty, agent or X11 forwarding; port-forwarding gives the forward back. OpenSSH's
  // per-key permitlisten/permitopen take host:port only (sshd(8)), so the socket is limited by the Match
  // block (AllowStreamLocalForwarding remote, PermitListen none, PermitOpen none).
  return `restrict,port-forwarding ${publicKey.trim()}`;
}

/** The worker's sshd settings for the agent's user (deploy/README.md, "An agent's bridge on another host"). */
export function workerSshdConfig(user: string): string {
  return [
    `# Switchyard: the ssh link of ${user} may listen on its Unix socket and do nothing else.`,
    `Match User ${user}`,
    '    StreamLocalBindUnlink yes',
    '    AllowStreamLocalForwarding remote',
    '    AllowTcpForwarding remote',
    '    PermitListen none',
    '    PermitOpen none',
    '    X11Forwarding no',
    '    PermitTTY no',
    '',
  ].join('\n');
}

/** Every file the worker needs, by its absolute path there, with its mode. */
export function workerFiles(
  entry: Record<string, unknown>,
  agent: { name: string; stateDir: string },
  ssh: { user: string },
  publicKey: string,
): Array<{ file: string; content: string; mode: number }> {
  const home = path.join(agent.stateDir, 'bridge');
  return [
    {
      file: '/etc/switchyard/switchyard.yaml',
      content: `# The worker's config of agent ${agent.name}: its bridge runs here (add-agent on the gateway's host).\n${stringify({ agents: [workerEntry(entry)] })}`,
      mode: 0o640,
    },
    {
      file: path.join(home, '.ssh', 'authorized_keys'),
      content: `${authorizedKeysLine(publicKey)}\n`,
      mode: 0o600,
    },
    {
      file: `/etc/ssh/sshd_config.d/switchyard-${agent.name}.conf`,
      content: workerSshdConfig(ssh.user),
      mode: 0o644,
    },
  ];
}

/** The worker's steps, as the operator runs them there. */
export function workerSteps(
  agent: { name: string; stateDir: string; workDir: string },
  user: string,
  root?: string,
): string[] {
  const home = path.join(agent.stateDir, 'bridge');
  return [
    `on the worker, with Switchyard installed (deploy/README.md, "Install"), as root:`,
    ...(root
      ? [
          `  copy ${root}/ to the worker's / (for example: tar -C ${root} -cf - . | ssh root@WORKER tar -C / --no-overwrite-dir -xf -)`,
        ]
      : []),
    '  (a worker that serves other agents too: add the entry to its switchyard.yaml instead of replacing it)',
    `  useradd --system --user-group --home-dir ${home} --no-create-home --shell /usr/sbin/nologin ${user}`,
    `  install -d -o ${user} -g ${user} -m 0700 ${home} ${home}/.ssh ${agent.workDir}`,
    ...(root ? [] : ['  write each worker: file above, with its mode']),
    `  chown ${user}:${user} ${home}/.ssh/authorized_keys`,
    '  chgrp switchyard /etc/switchyard/switchyard.yaml   (the bridge reads it through that group)',
    `  systemctl reload ssh`,
    `  sudo -u ${user} -H claude   (log the agent's user in to Claude, then /login)`,
    `  switchyard doctor ${agent.name}; systemctl enable --now switchyard-agent@${agent.name}`,
  ];
}

/**
 * The link's key on the gateway's host: kept when it exists, else generated without a passphrase (the
 * unit starts unattended) in a directory only the link's user reads. Returns its public half.
 */
export async function ensureLinkKey(
  identityFile: string,
  name: string,
  system: boolean,
  say: (line: string) => void,
): Promise<string> {
  const dir = path.dirname(identityFile);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (existsSync(identityFile)) say(`ssh key: ${identityFile} exists (kept)`);
  else {
    await run('ssh-keygen', [
      '-q',
      '-t',
      'ed25519',
      '-N',
      '',
      '-C',
      `switchyard-link-${name}`,
      '-f',
      identityFile,
    ]);
    say(`ssh key: generated ${identityFile} (0600; its public half goes to the worker)`);
  }
  // The link unit runs as `switchyard`: the key must be that user's, and nobody else's (ssh refuses it).
  chmodSync(identityFile, 0o600);
  if (system) await run('chown', ['switchyard:switchyard', dir, identityFile, `${identityFile}.pub`]);
  if (!existsSync(`${identityFile}.pub`)) {
    const { stdout } = await run('ssh-keygen', ['-y', '-f', identityFile]);
    writeFileSync(`${identityFile}.pub`, stdout, { mode: 0o644 });
  }
  return readFileSync(`${identityFile}.pub`, 'utf8').trim();
}

/**
 * The worker's host key in `knownHosts`: kept when the file knows the host, else asked of the worker
 * (`ssh-keyscan`) and appended, with its fingerprint said so the operator can compare it on the worker.
 * An unreachable worker is a warning with the command to run later.
 */
export async function learnHostKey(
  knownHosts: string,
  host: string,
  port: number,
  system: boolean,
  say: (line: string) => void,
): Promise<void> {
  const name = port === 22 ? host : `[${host}]:${port}`;
  mkdirSync(path.dirname(knownHosts), { recursive: true, mode: 0o700 });
  const known = await run('ssh-keygen', ['-F', name, '-f', knownHosts]).then(
    () => true,
    () => false,
  );
  if (known) {
    say(`known host: ${knownHosts} knows ${name} (kept)`);
    return;
  }
  let keys: string;
  try {
    ({ stdout: keys } = await run('ssh-keyscan', ['-T', '5', '-t', 'ed25519', '-p', String(port), host]));
  } catch (err) {
    keys = String((err as { stdout?: string }).stdout ?? '');
  }
  if (keys.trim() === '') {
    say(
      `known host: warning: ${host} port ${port} did not answer ssh-keyscan; once it does: ssh-keyscan -p ${port} ${host} >> ${knownHosts}`,
    );
    return;
  }
  appendFileSync(knownHosts, keys.endsWith('\n') ? keys : `${keys}\n`, { mode: 0o644 });
  if (system) await run('chown', ['switchyard:switchyard', knownHosts]);
  const { stdout: fingerprint } = await run('ssh-keygen', ['-l', '-F', name, '-f', knownHosts]).catch(() => ({
    stdout: '',
  }));
  const line = fingerprint.split('\n').find((l) => l.includes('SHA256:')) ?? '';
  say(
    `known host: added ${name} to ${knownHosts} (${line.match(/SHA256:\S+/)?.[0] ?? 'fingerprint unknown'}); compare it with ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on ${host}`,
  );
}

/** Writes the worker's files under `root` (created), or prints each with its path. */
export function deliverWorkerFiles(
  files: ReturnType<typeof workerFiles>,
  root: string | undefined,
  say: (line: string) => void,
): void {
  for (const { file, content, mode } of files) {
    if (root === undefined) {
      say(`worker: ${file} (mode 0${mode.toString(8)}):\n${content.replace(/^/gm, '    ')}`);
      continue;
    }
    const target = path.join(root, file);
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, content, { mode });
    chmodSync(target, mode);
    say(`worker: wrote ${target}`);
  }
}
