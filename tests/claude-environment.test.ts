/**
 * Least privilege for the real `claude` the bridge starts, under `switchyard run`, `up` and the sandbox:
 * its environment (`/proc/<pid>/environ`) holds no secret of the config — not the bot token read from
 * `token: { env }`, not `$CREDENTIALS_DIRECTORY`, not any other variable of the services — only the
 * allowlist and `claude.env`. And with umask 0000 the state the services create is still 0700/0600.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { recordedProcesses } from '@switchyard/agent-bridge';
import { rule, say } from '@switchyard/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandboxProcess, until, viewApi } from './sandbox-process.js';
import { botMessages, MAIN, systemPerTest } from './system.js';

/** Variables planted in the services' environment that must not reach Claude. */
const PLANTED = {
  E2E_BOT_TOKEN: '', // set from the generated config's token
  CREDENTIALS_DIRECTORY: '/run/credentials/switchyard-gateway@e2e.service',
  SOME_OTHER_SECRET: 'other-secret-value-4711',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-value-0815',
};

/** `/proc/<pid>/environ` as a map. */
function environOf(pid: number): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}

/** The pid of the claude recorded under `stateDir` (the bridge's `bridge.json`, wherever it is). */
function recordedClaude(stateDir: string): number | undefined {
  for (const entry of readdirSync(stateDir, { recursive: true, encoding: 'utf8' })) {
    if (path.basename(entry) !== 'bridge.json') continue;
    const pid = JSON.parse(readFileSync(path.join(stateDir, entry), 'utf8')).child?.pid;
    if (typeof pid === 'number') return pid;
  }
  return undefined;
}

/** Asserts Claude's environment carries none of `secrets` (names or values) and still what it needs. */
function expectClean(pid: number, secrets: Record<string, string>): void {
  const env = environOf(pid);
  const values = Object.values(env).join('\n');
  for (const [name, value] of Object.entries(secrets)) {
    expect(env[name], `${name} in claude's environment`).toBeUndefined();
    if (value) expect(values, `the value of ${name} in claude's environment`).not.toContain(value);
  }
  for (const name of Object.keys(env))
    expect(name, 'a variable of the service in claude’s environment').not.toMatch(/^SWITCHYARD_/);
  // It is the scripted model's claude, with what it needs from claude.env and the allowlist.
  expect(env.ANTHROPIC_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:/);
  expect(env.PATH).toBeTruthy();
}

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

describe('claude environment and file modes', () => {
  const startSystem = systemPerTest();
  let service: ChildProcess | undefined;
  let sandbox: SandboxProcess | undefined;
  afterEach(async () => {
    if (service && service.exitCode === null) {
      const gone = new Promise((resolve) => service?.once('exit', resolve));
      service.kill('SIGINT');
      await gone;
    }
    service = undefined;
    await sandbox?.stop();
    sandbox = undefined;
  });

  for (const command of ['run', 'up'] as const) {
    it(`${command}: no secret of the config reaches claude, and state is 0700/0600 under umask 0000`, async () => {
      const system = await startSystem({ rules: [rule('hello', say('Hello back.'))] });
      // The token moves from the config into the services' environment: `token: { env }`.
      const config = JSON.parse(readFileSync(system.configPath, 'utf8'));
      const secrets = { ...PLANTED, E2E_BOT_TOKEN: config.agents[0].token as string };
      config.agents[0].token = { env: 'E2E_BOT_TOKEN' };
      writeFileSync(system.configPath, JSON.stringify(config));
      let output = '';
      const args = command === 'run' ? ['run', 'e2e'] : ['up'];
      service = spawn(
        '/bin/sh',
        ['-c', 'umask 0000; exec "$0" "$@"', process.execPath, MAIN, '--config', system.configPath, ...args],
        {
          env: { ...process.env, ...secrets },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      service.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      service.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));

      system.telegram.sendText(system.chatId, 'hello');
      await system.telegram
        .waitFor(() => botMessages(system.telegram, system.chatId).find((m) => m.text === 'Hello back.'), {
          timeoutMs: 60_000,
        })
        .catch((err: unknown) => {
          throw new Error(`${String(err)}\n${output.slice(-5000)}`);
        });
      const stateDir = path.join(system.dir, 'state');
      const pid = recordedClaude(stateDir);
      if (pid === undefined) throw new Error('no claude recorded');
      expectClean(pid, secrets);
      // No secret in the services' log lines either.
      expect(output).not.toContain(secrets.E2E_BOT_TOKEN);

      expect(mode(stateDir)).toBe('700');
      for (const d of ['gateway', 'bridge']) expect(mode(path.join(stateDir, d)), d).toBe('700');
      const db = path.join(stateDir, 'gateway', 'gateway.sqlite');
      for (const f of [db, `${db}-wal`, `${db}-shm`]) expect(mode(f), f).toBe('600');
      const bridgeDir = path.join(stateDir, 'bridge');
      expect(mode(path.join(bridgeDir, 'outbox.log'))).toBe('600');
      // Each conversation's own files, in its own directory.
      const session = recordedProcesses(bridgeDir)[0]?.dir;
      if (!session) throw new Error('no conversation recorded');
      expect(mode(session)).toBe('700');
      for (const f of ['stdout.log', 'stderr.log', 'stdin.fifo', 'bridge.json']) {
        expect(mode(path.join(session, f)), f).toBe('600');
      }
    });
  }

  it('sandbox: no secret of the services reaches claude', async () => {
    sandbox = await startSandboxProcess({ env: PLANTED, umask: 0o000 });
    const api = viewApi(sandbox.url);
    const chatId = (await api.state()).chats[0]?.chat.id as number;
    const sent = await api.send(chatId, 'hello sandbox');
    await until(
      'an answer',
      async () =>
        (await api.state()).chats
          .find((c) => c.chat.id === chatId)
          ?.messages.find(
            (m) => m.from === 'bot' && m.messageId > sent.messageId && /hello sandbox/.test(m.text),
          ),
      60_000,
    );
    const stateDir = path.join(sandbox.dir, 'state');
    const pid = recordedClaude(stateDir);
    if (pid === undefined) throw new Error('no claude recorded');
    // The sandbox's own bot token is in its config inline: it must not reach claude either.
    const token = /token: "([^"]+)"/.exec(
      readFileSync(path.join(sandbox.dir, 'switchyard.yaml'), 'utf8'),
    )?.[1];
    expect(token).toBeTruthy();
    expectClean(pid, { ...PLANTED, SANDBOX_TOKEN: token ?? '' });
    // Nor another user of the machine, whatever the umask: the token is new on every run, and its own.
    expect(mode(path.join(sandbox.dir, 'switchyard.yaml'))).toBe('600');
    expect(mode(path.join(stateDir, 'gateway', 'gateway.sqlite'))).toBe('600');
  });
});
