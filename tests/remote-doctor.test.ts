/**
 * `switchyard doctor` and `status` for an agent whose bridge runs on another host, against a real
 * OpenSSH server (tests/sshd.ts): the link probed end to end with the link's own ssh options, each way
 * it fails said in words (a key the worker refuses, a wrong port, an unknown host key, the worker's
 * socket directory missing), and on a good link the bridge's host and release and the round trip the
 * protocol measured through ssh.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { rule, say } from '@switchyard/sandbox';
import { beforeEach, describe, expect, it } from 'vitest';
import { outputOf } from './processes.js';
import { remoteOf, startAndAsk } from './remote-system.js';
import { sshdAvailable, sshdPerFile, sshKeygen, type TestSshd } from './sshd.js';
import { MAIN, systemPerTest } from './system.js';

const describeSsh = sshdAvailable || process.env.CI ? describe : describe.skip;

interface Finding {
  level: string;
  path: string;
  message: string;
  fix?: string;
}

/** `switchyard ARGS --json`, without blocking this process (the Telegram stand-in runs in it). */
function cliJson(args: string[]): Promise<{ code: number | null; json: unknown; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args, '--json'], {
      env: { ...process.env, SWITCHYARD_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = outputOf(child);
    child.once('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(output.out());
      } catch {
        json = { unparsed: output.out() };
      }
      resolve({ code, json, err: output.err() });
    });
  });
}

async function doctorFindings(config: string, agent: string): Promise<Finding[]> {
  const { json, err } = await cliJson(['--config', config, 'doctor', agent]);
  const findings = (json as { agents?: Array<{ findings: Finding[] }> }).agents?.[0]?.findings;
  if (!findings) throw new Error(`doctor said no findings: ${JSON.stringify(json)} ${err}`);
  return findings;
}

/** Every file under `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

const sshFinding = (findings: Finding[]) => findings.find((f) => f.path.endsWith('].bridge.ssh'));

describeSsh('doctor and status: a bridge on another host, through a real sshd', () => {
  const server = sshdPerFile();
  let sshd: TestSshd;
  let sshDir: string;
  beforeEach(() => {
    sshd = server.sshd();
    sshDir = server.dir();
  });

  /** A config of the gateway's host whose bridge is on the test's sshd, with `ssh` overrides. */
  const gatewayConfig = (name: string, ssh: Record<string, unknown>, socket?: string): string => {
    const dir = path.join(sshDir, name);
    mkdirSync(path.join(dir, 'worker', 'bridge'), { recursive: true });
    writeFileSync(path.join(dir, 'token'), '4242:doctor-token-not-a-secret-0000000\n', { mode: 0o600 });
    const file = path.join(dir, 'switchyard.yaml');
    const agent = {
      name: 'far',
      token: { file: path.join(dir, 'token') },
      // Nothing listens there: Telegram is unreachable, which doctor reports as a warning only.
      apiRoot: 'http://127.0.0.1:9',
      allow: [1],
      workDir: path.join(dir, 'work-on-the-worker'),
      stateDir: path.join(dir, 'state'),
      runtimeDir: path.join(dir, 'run'),
      bridge: {
        host: '127.0.0.1',
        socket: socket ?? path.join(dir, 'worker', 'bridge', 'link.sock'),
        ssh: {
          user: sshd.user,
          port: sshd.port,
          identityFile: sshd.identityFile,
          knownHosts: sshd.knownHosts,
          ...ssh,
        },
      },
    };
    writeFileSync(file, JSON.stringify({ agents: [agent] }));
    return file;
  };

  it('says the worker refused the key, naming the user and what to put in authorized_keys', async () => {
    const other = path.join(sshDir, 'other_key');
    sshKeygen(other, 'not-authorized');
    const found = sshFinding(await doctorFindings(gatewayConfig('refused', { identityFile: other }), 'far'));
    expect(found).toMatchObject({
      level: 'error',
      message: `127.0.0.1 refused the key ${other} for user ${sshd.user} (Permission denied)`,
    });
    expect(found?.fix).toContain('restrict,port-forwarding');
  });

  it('says nothing accepts ssh on a wrong port', async () => {
    const found = sshFinding(await doctorFindings(gatewayConfig('port', { port: 9 }), 'far'));
    expect(found).toMatchObject({
      level: 'error',
      message:
        'nothing accepts ssh at 127.0.0.1 port 9 (connection refused): sshd does not run there, or the port is wrong',
    });
  });

  it("says the worker's host key is unknown, and how to learn it", async () => {
    const empty = path.join(sshDir, 'empty_known_hosts');
    writeFileSync(empty, '');
    const found = sshFinding(await doctorFindings(gatewayConfig('hostkey', { knownHosts: empty }), 'far'));
    expect(found?.level).toBe('error');
    expect(found?.message).toContain(`${empty} holds no host key for 127.0.0.1 port ${sshd.port}`);
    expect(found?.fix).toContain(`ssh-keyscan -p ${sshd.port} 127.0.0.1 >> ${empty}`);
  });

  it("says the worker's sshd would not listen where the socket's directory is missing", async () => {
    const missing = path.join(sshDir, 'nowhere', 'link.sock');
    const found = sshFinding(await doctorFindings(gatewayConfig('missing', {}, missing), 'far'));
    expect(found?.level).toBe('error');
    expect(found?.message).toContain(`would not listen on ${path.join(sshDir, 'nowhere', 'doctor.sock')}`);
    expect(found?.message).toContain(`the directory ${path.join(sshDir, 'nowhere')} is missing there`);
  });

  it("add-agent sets up the gateway's side and the worker's files, with no gateway secret in them, and doctor then passes the link", async () => {
    const dir = path.join(sshDir, 'add');
    const etc = path.join(dir, 'etc');
    const worker = path.join(dir, 'worker-root');
    mkdirSync(etc, { recursive: true });
    const TOKEN = '4242:add-agent-token-not-a-secret-000000';
    const OTHER = '4343:another-agents-inline-token-0000000';
    const config = path.join(etc, 'switchyard.yaml');
    // Another agent of this gateway, with its token inline: none of it may reach this agent's worker.
    writeFileSync(
      config,
      `agents:\n  - { name: other, token: "${OTHER}", allow: [2], workDir: ${dir}/other }\n`,
    );
    writeFileSync(path.join(dir, 'token'), `${TOKEN}\n`, { mode: 0o600 });
    const stateDir = path.join(dir, 'state');
    const add = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          MAIN,
          'add-agent',
          'far',
          '--allow',
          '1',
          '--token-file',
          path.join(dir, 'token'),
          '--api-root',
          'http://127.0.0.1:9',
          '--state-dir',
          stateDir,
          '--runtime-dir',
          path.join(dir, 'run'),
          '--work-dir',
          path.join(dir, 'work'),
          '--bridge-host',
          '127.0.0.1',
          '--bridge-port',
          String(sshd.port),
          '--bridge-user',
          sshd.user,
          '--worker-root',
          worker,
        ],
        {
          env: { ...process.env, SWITCHYARD_CONFIG: '', SWITCHYARD_NO_SYSTEM: '1', SWITCHYARD_ETC: etc },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const output = outputOf(child);
      child.once('close', (code) => resolve({ code, err: output.err() }));
    });
    expect(add.code, add.err).toBe(0);
    // The gateway's side: the key generated (0600), the worker's host key learnt, the bridge: block written.
    const key = path.join(etc, 'ssh', 'far.key');
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(etc, 'ssh', 'known_hosts'), 'utf8')).toContain(
      readFileSync(path.join(sshDir, 'host_ed25519.pub'), 'utf8').split(' ')[1],
    );
    expect(readFileSync(config, 'utf8')).toMatch(/bridge:\n\s+host: 127\.0\.0\.1/);
    // The worker's files: its config, the restricted authorized_keys line, the sshd Match block.
    const files = filesUnder(worker);
    const authorized = path.join(worker, stateDir, 'bridge', '.ssh', 'authorized_keys');
    expect(files.sort()).toEqual(
      [
        path.join(worker, 'etc/switchyard/switchyard.yaml'),
        authorized,
        path.join(worker, 'etc/ssh/sshd_config.d/switchyard-far.conf'),
      ].sort(),
    );
    const line = readFileSync(authorized, 'utf8');
    expect(line).toBe(`restrict,port-forwarding ${readFileSync(`${key}.pub`, 'utf8').trim()}\n`);
    // No gateway secret: no token (this agent's or another's), no private key, in anything for the worker.
    const privateKey = readFileSync(key, 'utf8');
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toContain(TOKEN);
      expect(text, file).not.toContain(OTHER);
      expect(text, file).not.toContain(privateKey.split('\n')[1]);
      expect(text, file).not.toMatch(/token:/);
    }
    expect(add.err).not.toContain(TOKEN);
    // The worker's side done as its files say (here: the test sshd's authorized keys), doctor passes the link.
    appendFileSync(path.join(sshDir, 'authorized_keys'), line);
    mkdirSync(path.join(stateDir, 'bridge'), { recursive: true });
    const found = sshFinding(await doctorFindings(config, 'far'));
    expect(found, JSON.stringify(found)).toMatchObject({ level: 'ok' });
  });

  const startSystem = systemPerTest();
  it('on a good link: the probe passes, the bridge is connected from its host, and status shows the round trip', async () => {
    const system = await startSystem({
      rules: [rule('hello', say('Hello from the worker host.'))],
      remote: remoteOf(sshd),
    });
    await startAndAsk(system, 'hello', 'Hello from the worker host.');
    // The first ping goes 5 s after the handshake: wait for its round trip in the gateway's record.
    type Status = {
      agents: Array<{ bridge: { where: string; connected: boolean }; link?: Record<string, unknown> }>;
    };
    let status: Status | undefined;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      status = (await cliJson(['--config', system.configPath, 'status', 'e2e'])).json as Status;
      if (status.agents?.[0]?.link?.roundTripMs !== undefined) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const agent = status?.agents[0];
    expect(agent?.bridge).toMatchObject({ where: `${sshd.user}@127.0.0.1:${sshd.port}`, connected: true });
    expect(agent?.link).toMatchObject({ peerHost: hostname() });
    expect(agent?.link?.roundTripMs).toEqual(expect.any(Number));
    expect(agent?.link?.running).toHaveLength(1);

    const findings = await doctorFindings(system.configPath, 'e2e');
    expect(sshFinding(findings)).toMatchObject({ level: 'ok' });
    const bridge = findings.filter((f) => f.path === 'agents[0].bridge').map((f) => f.message);
    expect(bridge).toContain(`the link runs (pid ${system.pid('link')})`);
    expect(bridge).toContainEqual(
      expect.stringMatching(new RegExp(`^the bridge is connected from ${hostname()}, release `)),
    );
    expect(findings.filter((f) => f.level === 'error')).toEqual([]);
  });
});
