/**
 * `switchyard add-agent NAME`: everything one agent needs on this host before `systemctl enable --now`,
 * created if missing and kept if present, so running it again changes nothing:
 *
 * 1. its entry in the config (`token: { credential: telegram-token }`, the directories the units use);
 * 2. its user `sy-NAME` (group `sy-NAME`), whose home is the bridge's state directory — the units run
 *    as it (`User=sy-%i`, and the gateway's `Group=sy-%i`), so it must exist before they start;
 * 3. that home (`<stateDir>/bridge`, 0700), so `sudo -u sy-NAME -H claude` can log in before the first
 *    start, and the working directory (0700), both owned by the agent's user;
 * 4. the bot token as `<etc>/credentials/NAME.token` (root, 0600, in a 0700 directory), which only the
 *    gateway unit loads (`LoadCredential=`); it is checked against Telegram (`getMe`) here, as root,
 *    because the agent's user must never be able to read it;
 * 5. then `switchyard doctor NAME` as the agent's user, with the unit's HOME and groups, so what it
 *    finds (claude's login, writable directories) is what the bridge will find.
 *
 * With `system: false` (`SWITCHYARD_NO_SYSTEM=1`, a staging install) there are no users and no chown:
 * every directory belongs to whoever runs it, and the doctor runs as that user.
 *
 * With `remote` (`--bridge-host`) the bridge runs on another host: the entry gets a `bridge:` block, the
 * working directory and Claude's home are the worker's (not made here), and steps 3 and 5 give way to
 * `remote-setup.ts` — the link's key and the worker's host key here, the worker's files printed or
 * written under `--worker-root`. The doctor is then left for after the worker is set up: its link
 * checks cannot pass before.
 */
import { execFile, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { isMap, isSeq, parse, parseDocument } from 'yaml';
import type { ConfigEnvironment } from './agent-config.js';
import { loadConfig } from './config.js';
import { BOT_TOKEN } from './config-schema.js';
import {
  bridgeBlock,
  deliverWorkerFiles,
  ensureLinkKey,
  learnHostKey,
  type RemoteSetupOptions,
  workerFiles,
  workerSteps,
} from './remote-setup.js';

/** Options of {@link addAgent}. */
export interface AddAgentOptions {
  name: string;
  configFile: string;
  /** Where the credentials directory is (`/etc/switchyard`). */
  etcDir: string;
  /** Create users and chown (as root); false for a staging install. */
  system: boolean;
  /** Telegram user ids allowed to talk to a new agent (required when the entry is new). */
  allow: readonly number[];
  /**
   * For a new entry; the defaults are the units' (`/srv/agents/NAME`, `/var/lib/switchyard/NAME`,
   * `/run/switchyard/NAME`).
   */
  workDir?: string | undefined;
  stateDir?: string | undefined;
  runtimeDir?: string | undefined;
  apiRoot?: string | undefined;
  /** The bot token, asked only when the credential file is missing. */
  readToken(): Promise<string>;
  environment: ConfigEnvironment;
  /** The node binary and `main.js` the doctor is run with. */
  node: string;
  mainPath: string;
  /** Where each step's outcome is said (default: stderr). */
  say?(line: string): void;
  /** The bridge runs on another host (`--bridge-host` and the flags beside it). */
  remote?: RemoteSetupOptions | undefined;
}

/** A mistake the operator fixes before add-agent can go on. */
export class AddAgentError extends Error {
  override readonly name = 'AddAgentError';
}

const run = promisify(execFile);

/** Runs the steps in the module comment; resolves with the doctor's exit status. */
export async function addAgent(options: AddAgentOptions): Promise<number> {
  const say = options.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { name, system } = options;
  const user = `sy-${name}`;

  // 1. The config entry.
  const before = existsSync(options.configFile) ? readFileSync(options.configFile, 'utf8') : undefined;
  const edited = withAgentEntry(before, name, () => {
    if (options.allow.length === 0) {
      throw new AddAgentError(
        `no agent "${name}" in ${options.configFile} yet: say who may talk to it with --allow TELEGRAM_USER_ID[,…] (a user id, as @userinfobot tells it)`,
      );
    }
    return {
      name,
      token: { credential: 'telegram-token' },
      ...(options.apiRoot ? { apiRoot: options.apiRoot } : {}),
      allow: [...options.allow],
      workDir: options.workDir ?? `/srv/agents/${name}`,
      stateDir: options.stateDir ?? `/var/lib/switchyard/${name}`,
      runtimeDir: options.runtimeDir ?? `/run/switchyard/${name}`,
      ...(options.remote ? { bridge: bridgeBlock(name, options.etcDir, options.remote) } : {}),
    };
  });
  if (edited !== before) {
    writeAtomic(options.configFile, edited, 0o640);
    try {
      loadConfig(options.configFile, options.environment);
    } catch (err) {
      if (before === undefined) rmSync(options.configFile, { force: true });
      else writeAtomic(options.configFile, before, 0o640);
      throw err;
    }
    if (system) await run('chgrp', ['switchyard', options.configFile]).catch(() => undefined);
    say(`config: added agent "${name}" to ${options.configFile}`);
  } else {
    say(`config: agent "${name}" is in ${options.configFile} (kept as it is)`);
  }
  const agent = loadConfig(options.configFile, options.environment).agents.find((a) => a.name === name);
  if (!agent) throw new AddAgentError(`agent "${name}" is not in ${options.configFile}`);
  const home = path.join(agent.stateDir, 'bridge');
  if (options.remote && !agent.bridge) {
    throw new AddAgentError(
      `agent "${name}" is in ${options.configFile} with its bridge beside the gateway: add its bridge: block there by hand (deploy/README.md, "An agent's bridge on another host"), or remove the entry and run add-agent again`,
    );
  }

  // 2. The user.
  if (system) {
    if (await userExists(user)) say(`user: ${user} exists`);
    else {
      await run('useradd', [
        '--system',
        '--user-group',
        '--home-dir',
        home,
        '--no-create-home',
        '--shell',
        '/usr/sbin/nologin',
        user,
      ]);
      say(`user: created ${user} (home ${home})`);
    }
  }

  // 3. Claude's home and the working directory, the agent's own (on the worker, for a remote bridge).
  mkdirSync(agent.stateDir, { recursive: true, mode: 0o755 });
  for (const [what, dir] of agent.bridge
    ? []
    : ([
        ["the bridge's state directory (claude's HOME)", home],
        ['the working directory', agent.workDir],
      ] as const)) {
    if (existsSync(dir)) {
      say(`${what}: ${dir} exists (kept)`);
      continue;
    }
    // Parents searchable (a 0700 /srv/agents would lock the agent out of its own directory).
    mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
    mkdirSync(dir, { mode: 0o700 });
    if (system) await run('chown', [`${user}:${user}`, dir]);
    say(`${what}: created ${dir}${system ? ` (${user}, 0700)` : ''}`);
  }

  // 4. The token: root's alone.
  const credentials = path.join(options.etcDir, 'credentials');
  const tokenFile = path.join(credentials, `${name}.token`);
  mkdirSync(credentials, { recursive: true, mode: 0o700 });
  chmodSync(credentials, 0o700);
  let token: string;
  if (existsSync(tokenFile)) {
    token = readFileSync(tokenFile, 'utf8').split('\n')[0]?.trim() ?? '';
    if (!BOT_TOKEN.test(token)) {
      throw new AddAgentError(
        `${tokenFile} does not hold a bot token: put the token from @BotFather on its first line (or delete it and run add-agent again)`,
      );
    }
    say(`token: ${tokenFile} exists (kept)`);
  } else {
    token = (await options.readToken()).trim();
    if (!BOT_TOKEN.test(token)) {
      throw new AddAgentError(
        'that is not a bot token: it looks like 123456789:AAE… (from @BotFather, /mybots → API Token)',
      );
    }
    writeAtomic(tokenFile, `${token}\n`, 0o600);
    say(`token: wrote ${tokenFile} (0600, read by the gateway unit alone)`);
  }
  say(await tokenVerdict(agent.apiRoot, token));

  if (agent.bridge) {
    const remote = agent.bridge;
    const publicKey = await ensureLinkKey(remote.ssh.identityFile, name, system, say);
    await learnHostKey(remote.ssh.knownHosts, remote.host, remote.ssh.port, system, say);
    if (system && existsSync('/run/systemd/system')) {
      await run('systemctl', ['enable', `switchyard-link@${name}.service`]);
      say(`link: enabled switchyard-link@${name} (started with the gateway's unit below)`);
    }
    const entry = (
      parse(readFileSync(options.configFile, 'utf8')) as { agents: Array<Record<string, unknown>> }
    ).agents.find((a) => a.name === name) ?? { name };
    deliverWorkerFiles(workerFiles(entry, agent, remote.ssh, publicKey), options.remote?.workerRoot, say);
    for (const line of workerSteps(agent, remote.ssh.user, options.remote?.workerRoot)) say(line);
    say(
      `then here: systemctl enable --now switchyard-gateway@${name} switchyard-link@${name}; switchyard doctor ${name} checks the link end to end`,
    );
    return 0;
  }

  // 5. The doctor, as the bridge will run.
  const doctor = [options.mainPath, '--config', options.configFile, 'doctor', name];
  const [command, args] = system
    ? [
        'runuser',
        ['-u', user, '-g', user, '-G', 'switchyard', '--', 'env', `HOME=${home}`, options.node, ...doctor],
      ]
    : [options.node, doctor];
  say(`doctor: ${system ? `as ${user}: ` : ''}switchyard doctor ${name}`);
  const status = await new Promise<number>((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', env: options.environment.env });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code ?? 1));
  });
  say(
    status === 0
      ? `next: log ${user} into Claude (sudo -u ${user} -H claude, then /login), then: systemctl enable --now switchyard-gateway@${name} switchyard-agent@${name}`
      : 'fix what doctor reports, then run add-agent again (it keeps what is done)',
  );
  return status;
}

/**
 * The config text with an entry for `name` appended to `agents` (comments and layout kept), or the
 * same text when the entry exists. `entry` is asked only when it is needed.
 */
export function withAgentEntry(text: string | undefined, name: string, entry: () => object): string {
  const doc = parseDocument(text ?? 'agents: []\n');
  if (doc.errors.length > 0) throw new AddAgentError(`cannot parse the config: ${doc.errors[0]?.message}`);
  if (!isMap(doc.contents)) throw new AddAgentError('the config is not a mapping with an `agents:` list');
  let agents = doc.get('agents');
  if (agents === undefined || agents === null) {
    doc.set('agents', doc.createNode([]));
    agents = doc.get('agents');
  }
  if (!isSeq(agents)) throw new AddAgentError('`agents:` in the config is not a list');
  if (agents.items.some((item) => isMap(item) && item.get('name') === name)) return text ?? '';
  agents.flow = false;
  agents.add(doc.createNode(entry()));
  return doc.toString();
}

async function userExists(user: string): Promise<boolean> {
  try {
    await run('getent', ['passwd', user]);
    return true;
  } catch {
    return false;
  }
}

/** `getMe` with the token, said in words; never throws (an offline host only gets a warning). */
async function tokenVerdict(apiRoot: string, token: string): Promise<string> {
  try {
    const res = await fetch(`${apiRoot}/bot${token}/getMe`, { signal: AbortSignal.timeout(10_000) });
    const body = (await res.json().catch(() => ({}))) as { ok?: boolean; result?: { username?: string } };
    if (body.ok) return `token: Telegram knows it as @${body.result?.username ?? '?'}`;
    if (res.status === 401 || res.status === 404) {
      throw new AddAgentError(
        'Telegram rejects this bot token (401): copy it again from @BotFather, then replace the token file',
      );
    }
    return `token: warning: getMe answered ${res.status}; the token was not confirmed`;
  } catch (err) {
    if (err instanceof AddAgentError) throw err;
    return `token: warning: cannot reach ${apiRoot} (${(err as Error).message}); the token was not confirmed`;
  }
}

/** Writes `content` beside `file` with `mode` and renames it into place. */
function writeAtomic(file: string, content: string, mode: number): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode });
  chmodSync(tmp, existsSync(file) ? statSync(file).mode & 0o777 : mode);
  renameSync(tmp, file);
}
