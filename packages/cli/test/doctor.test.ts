import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTelegramServer, type TelegramServer } from '@switchyard/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { type DoctorEnvironment, type DoctorReport, doctorAgent } from '../src/doctor.js';

const TOKEN = '777001:doctor-test-token-not-a-secret-00';
let dir: string;
let telegram: TelegramServer;
let apiRoot: string;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'sy-doctor-'));
  mkdirSync(path.join(dir, 'work'));
  mkdirSync(path.join(dir, 'bin'));
  writeFileSync(path.join(dir, 'bin', 'claude'), '#!/bin/sh\n', { mode: 0o755 });
  telegram = createTelegramServer({ token: TOKEN, webView: false });
  ({ apiRoot } = await telegram.start());
});
afterEach(async () => {
  await telegram.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function doctor(
  options: {
    token?: string;
    apiRoot?: string;
    env?: Record<string, string>;
    host?: Pick<DoctorEnvironment, 'userEntry' | 'uid' | 'ssh' | 'pollProbeSeconds'>;
    /** The agent's entry after its name, instead of the default's token, apiRoot, allow and workDir. */
    entry?: string;
  } = {},
) {
  const file = path.join(dir, 'switchyard.yaml');
  const entry =
    options.entry ??
    `    token: "${options.token ?? TOKEN}"\n    apiRoot: "${options.apiRoot ?? apiRoot}"\n    allow: [1]\n    workDir: work\n`;
  const yaml = `agents:\n  - name: doctor-unit-test\n${entry}`;
  const env = { PATH: path.join(dir, 'bin'), HOME: dir, ANTHROPIC_API_KEY: 'sk-test', ...options.env };
  const agent = parseConfig(yaml, file, { env, cwd: dir }).agents[0];
  if (!agent) throw new Error('no agent');
  return doctorAgent(agent, 0, file, {
    env,
    cwd: dir,
    systemd: false,
    telegramTimeoutMs: 2000,
    // Each doctor run long-polls for another poller. Only the test that has one needs the poll to last
    // (it passes 1 s); the rest poll without waiting, since no other poller could cut them short.
    pollProbeSeconds: 0,
    userEntry: () => undefined,
    ...options.host,
  });
}

const at = (report: DoctorReport, level: string) =>
  report.findings.filter((f) => f.level === level).map((f) => `${f.path}: ${f.message}`);

describe('doctor', () => {
  it('finds nothing wrong with a valid token, a working directory, claude and an API key', async () => {
    const report = await doctor();
    expect(at(report, 'error')).toEqual([]);
    // Outside systemd, the one warning: Claude runs as the gateway's user and can read the token.
    expect(at(report, 'warn')).toEqual([
      expect.stringMatching(/^agents\[0\]\.token: outside systemd .*can read the bot token/),
    ]);
    expect(at(report, 'ok')).toContain('agents[0].token: the token is bot @switchyard_sandbox_bot');
    expect(at(report, 'ok')).toContain('telegram: no other process polls this bot');
    expect(report.canStart).toBe(true);
  });

  it('says when Telegram rejects the token', async () => {
    const report = await doctor({ token: '777001:some-other-token-not-a-secret-00' });
    expect(at(report, 'error')).toEqual([
      'agents[0].token: Telegram rejects this bot token (401 Unauthorized)',
    ]);
    expect(report.canStart).toBe(false);
    expect(JSON.stringify(report)).not.toContain('some-other-token');
  });

  it('says when another process polls the same bot (409 from getUpdates)', async () => {
    // Another bot instance: polls again as soon as a poll ends, as grammY's runner does.
    const poll = new AbortController();
    const other = (async () => {
      while (!poll.signal.aborted) {
        await fetch(`${apiRoot}/bot${TOKEN}/getUpdates?timeout=30`, { signal: poll.signal }).catch(
          () => undefined,
        );
      }
    })();
    try {
      const report = await doctor({ host: { pollProbeSeconds: 1 } });
      expect(at(report, 'error')).toEqual([
        expect.stringMatching(/^agents\[0\]\.token: another process uses this bot token: Conflict/),
      ]);
      expect(report.canStart).toBe(false);
    } finally {
      poll.abort();
      await other;
    }
  });

  it('treats an unreachable Telegram as a warning, not a failure', async () => {
    const closed = createTelegramServer({ token: TOKEN, webView: false });
    const { apiRoot: gone } = await closed.start();
    await closed.stop();
    const report = await doctor({ apiRoot: gone });
    expect(at(report, 'warn')).toEqual([
      expect.stringMatching(/^agents\[0\]\.token: outside systemd/),
      expect.stringMatching(/^telegram: cannot reach http:\/\/127\.0\.0\.1:\d+ /),
    ]);
    expect(report.canStart).toBe(true);
  });

  it('says claude has no credentials, with the file it looked for', async () => {
    const report = await doctor({ env: { ANTHROPIC_API_KEY: '' } });
    expect(at(report, 'error')).toEqual([
      `agents[0].claude.env: claude has no credentials for this user (no ${path.join(dir, '.claude', '.credentials.json')}, no ANTHROPIC_API_KEY)`,
    ]);
  });

  describe("the agent user's Claude login, under sudo", () => {
    const LOGIN = '{"claudeAiOauth":{"accessToken":"sk-ant-oat-test","refreshToken":"r","expiresAt":1}}';
    /** The agent user sy-doctor-unit-test, with its own home; the doctor runs as root (uid 0). */
    const asRoot = (): Pick<DoctorEnvironment, 'userEntry' | 'uid'> => ({
      uid: 0,
      userEntry: (name) =>
        name === 'sy-doctor-unit-test' ? { uid: 4321, home: path.join(dir, 'agent-home') } : undefined,
    });
    const login = (home: string, text: string) => {
      mkdirSync(path.join(home, '.claude'), { recursive: true });
      writeFileSync(path.join(home, '.claude', '.credentials.json'), text);
    };

    it("looks in the agent user's home, not the caller's (sudo kept root's HOME)", async () => {
      login(path.join(dir, 'agent-home'), LOGIN);
      const report = await doctor({ env: { ANTHROPIC_API_KEY: '' }, host: asRoot() });
      expect(at(report, 'error')).toEqual([]);
      expect(at(report, 'ok')).toContain(
        `agents[0].claude.env: claude is logged in as agent user sy-doctor-unit-test (${path.join(dir, 'agent-home', '.claude', '.credentials.json')})`,
      );
    });

    it("does not count the caller's own ANTHROPIC_API_KEY, and its fix is the agent's login or its unit's EnvironmentFile", async () => {
      login(dir, LOGIN); // the caller's own login does not help the agent either
      const report = await doctor({ host: asRoot() });
      const finding = report.findings.find((f) => f.path === 'agents[0].claude.env');
      expect(finding).toMatchObject({
        level: 'error',
        message: `claude has no credentials for agent user sy-doctor-unit-test (no ${path.join(dir, 'agent-home', '.claude', '.credentials.json')}, no ANTHROPIC_API_KEY)`,
      });
      expect(finding?.fix).toContain('sudo -u sy-doctor-unit-test -H claude');
      expect(finding?.fix).toContain('EnvironmentFile=');
      // The units refuse a key in claude.env (secret-exposure.ts): never suggest it.
      expect(finding?.fix).not.toContain('claude.env');
    });

    it('an empty {} credentials file is no login', async () => {
      login(path.join(dir, 'agent-home'), '{}');
      const report = await doctor({ env: { ANTHROPIC_API_KEY: '' }, host: asRoot() });
      expect(at(report, 'error')).toEqual([
        `agents[0].claude.env: claude has no credentials for agent user sy-doctor-unit-test (${path.join(dir, 'agent-home', '.claude', '.credentials.json')} holds no login, no ANTHROPIC_API_KEY)`,
      ]);
      login(dir, '{}');
      const mine = await doctor({ env: { ANTHROPIC_API_KEY: '' } });
      expect(at(mine, 'error')).toEqual([
        `agents[0].claude.env: claude has no credentials for this user (${path.join(dir, '.claude', '.credentials.json')} holds no login, no ANTHROPIC_API_KEY)`,
      ]);
    });
  });

  describe('a bridge on another host: which side this host is', () => {
    /** A remote agent whose working directory and claude are the worker's (absent here). */
    const remote = async (key: string) => {
      writeFileSync(path.join(dir, 'token'), `${TOKEN}\n`, { mode: 0o600 });
      // ssh itself is not run here: `false` fails as ssh would, with nothing to classify.
      return doctor({
        host: { ssh: 'false' },
        entry: `    token: { file: ${path.join(dir, 'token')} }\n    apiRoot: "${apiRoot}"\n    allow: [1]\n    workDir: /nowhere/far\n    claude: { bin: /nowhere/claude }\n    bridge: { host: build-box, ssh: { identityFile: ${key}, knownHosts: ${path.join(dir, 'kh')} } }\n`,
      });
    };

    it("on the gateway's host (the key is here) it does not ask for the worker's directory or claude, and probes the link", async () => {
      writeFileSync(path.join(dir, 'link.key'), 'not really a key\n', { mode: 0o600 });
      const report = await remote(path.join(dir, 'link.key'));
      expect(at(report, 'ok')).toContainEqual(
        expect.stringMatching(/^agents\[0\]\.bridge: this is the gateway's host/),
      );
      expect(at(report, 'error').filter((f) => /workDir|claude/.test(f))).toEqual([]);
      expect(at(report, 'error')).toContainEqual(
        expect.stringMatching(/^agents\[0\]\.bridge\.ssh: ssh to sy-doctor-unit-test@build-box:22 failed/),
      );
      expect(at(report, 'ok')).toContain('agents[0].token: the token is bot @switchyard_sandbox_bot');
    });

    it('on the worker (no key here) it checks the working directory and claude, and not Telegram or the link', async () => {
      const report = await remote(path.join(dir, 'absent.key'));
      expect(at(report, 'ok')).toContainEqual(
        expect.stringMatching(/^agents\[0\]\.bridge: this is taken as the worker build-box/),
      );
      expect(at(report, 'error')).toContainEqual(expect.stringMatching(/^agents\[0\]\.workDir: /));
      expect(report.findings.filter((f) => f.path === 'telegram' || f.path.endsWith('.bridge.ssh'))).toEqual(
        [],
      );
    });
  });
});
