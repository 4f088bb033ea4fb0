/**
 * The `switchyard` command as an operator meets it: clear refusals of bad input, and `up` running every
 * agent that has a token (here against the local Telegram server standing in for Telegram).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspectGatewayStore } from '@switchyard/gateway';
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { outputOf } from './processes.js';
import { botMessages, MAIN, systemPerTest } from './system.js';

function cli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: options.cwd ?? tmpdir(),
    env: { ...process.env, SWITCHYARD_CONFIG: '', ...options.env },
    encoding: 'utf8',
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** `cli`, without blocking this process: for commands that talk to the in-process Telegram stand-in. */
function cliAsync(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, SWITCHYARD_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = outputOf(child);
    child.once('close', (code) => resolve({ code, out: output.out(), err: output.err() }));
  });
}

describe('the switchyard command', () => {
  const startSystem = systemPerTest();

  it('refuses a bad config before starting anything, listing every problem by path', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-cli-'));
    try {
      const file = path.join(dir, 'switchyard.yaml');
      writeFileSync(
        file,
        'agents:\n  - name: demo\n    allow: [1, "two"]\n    workDir: /w\n    claude: { permissionMode: yolo }\n',
      );
      for (const command of [
        ['config', 'check'],
        ['gateway', 'demo'],
        ['bridge', 'demo'],
        ['run', 'demo'],
      ]) {
        const { code, err } = cli(['--config', file, ...command]);
        expect(code, command.join(' ')).toBe(2);
        expect(err).toContain('agents[0].allow[1]: expected a Telegram user id (integer)');
        expect(err).toMatch(/agents\[0\]\.claude\.permissionMode: /);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the agents it knows when asked for another, and explains a missing config', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-cli-'));
    try {
      writeFileSync(
        path.join(dir, 'switchyard.yaml'),
        'agents:\n  - { name: alpha, allow: [1], workDir: /w }\n',
      );
      const unknown = cli(['gateway', 'beta'], { cwd: dir });
      expect(unknown.code).toBe(2);
      expect(unknown.err).toContain('no agent "beta"');
      expect(unknown.err).toContain('alpha');
      const missing = cli(['--config', path.join(dir, 'nope.yaml'), 'config', 'check']);
      expect(missing.code).toBe(2);
      expect(missing.err).toContain('copy deploy/switchyard.example.yaml');
      expect(cli(['frobnicate']).code).toBe(2);
      expect(cli(['help']).out).toContain('usage: switchyard');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('`config check` summarises a valid file and reports unknown keys together with host problems', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-cli-'));
    try {
      const file = path.join(dir, 'switchyard.yaml');
      const work = path.join(dir, 'work');
      writeFileSync(
        file,
        `agents:\n  - { name: demo, allow: [1], workDir: ${work}, claude: { bin: /nonexistent/claude } }\n`,
      );
      const valid = cli(['--config', file, 'config', 'check']);
      // A short summary, not the whole config as JSON (that is --json).
      expect(valid.out.split('\n').filter(Boolean)).toEqual([
        `${file}: 1 agent(s)`,
        expect.stringMatching(/^ {2}demo: no token \(local sandbox\); works in .*work; state in /),
      ]);
      expect(valid.out).not.toContain('{');
      expect(valid.err).toContain(`ERROR agents[0].workDir: the working directory ${work} does not exist`);
      expect(valid.code).toBe(1);

      writeFileSync(
        file,
        `agents:\n  - { name: demo, allow: [1], wrkDir: /x, workDir: ${work}, claude: { bin: /nonexistent/claude } }\n`,
      );
      const typo = cli(['--config', file, 'config', 'check']);
      expect(typo.err).toContain('ERROR agents[0]: unknown setting "wrkDir" (did you mean workDir?)');
      // The check goes on to the host.
      expect(typo.err).toContain('ERROR agents[0].workDir: the working directory');
      expect(typo.err).toContain('ERROR agents[0].claude.bin:');
      expect(typo.code).toBe(2);
      const json = cli(['--config', file, 'config', 'check', '--json']);
      expect(JSON.parse(json.out)).toMatchObject({
        ok: false,
        problems: [expect.stringContaining('did you mean workDir?')],
        findings: expect.arrayContaining([
          expect.objectContaining({ level: 'error', path: 'agents[0].workDir' }),
        ]),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('`--json` commands report a refused config as JSON, and `backup` of an agent that never ran fails', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-cli-'));
    try {
      const file = path.join(dir, 'switchyard.yaml');
      writeFileSync(file, 'agents:\n  - { name: demo, allow: [1], workDir: 5 }\n');
      const status = cli(['--config', file, 'status', '--json']);
      expect(status.code).toBe(2);
      expect(JSON.parse(status.out)).toEqual({
        ok: false,
        error: expect.objectContaining({
          kind: 'config',
          file,
          problems: [
            'agents[0].workDir: must be text, but it is the number 5; to mean the text, quote it: "5"',
          ],
        }),
      });

      writeFileSync(file, `agents:\n  - { name: demo, allow: [1], workDir: ${dir} }\n`);
      const dest = path.join(dir, 'backup');
      const backup = cli(['--config', file, 'backup', 'demo', dest]);
      expect(backup.code).not.toBe(0);
      expect(backup.err).toMatch(/agent "demo" has no state to back up: .* is missing or empty/);
      expect(existsSync(dest)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('`pnpm start` says it is building before the silent tsc -b', () => {
    const root = path.resolve(path.dirname(MAIN), '../../..');
    const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    const [first, ...rest] = String(scripts.start).split(' && ');
    expect(rest[0]).toBe('tsc -b');
    const said = spawnSync('sh', ['-c', first ?? ''], { encoding: 'utf8' });
    expect(said.stdout).toMatch(/^switchyard: building/);
  });

  it('`up` runs every agent that has a token, answers, and stops cleanly on SIGINT', async () => {
    const system = await startSystem({ rules: [rule('ping', say('pong'))] });
    const { telegram, chatId } = system;
    const masked = cli(['--config', system.configPath, 'config', 'check']);
    expect(masked.code).toBe(0);
    expect(masked.out).not.toContain('e2e-token-not-a-secret');
    const up = spawn(process.execPath, [MAIN, '--config', system.configPath, 'up'], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => up.once('exit', (code) => resolve(code)));
    try {
      telegram.sendText(chatId, 'ping');
      await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'pong'), {
        timeoutMs: 60_000,
      });
      up.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (up.exitCode === null) up.kill('SIGKILL');
    }
  });

  it('`status`, `doctor` and `backup` read a running agent from the outside', async () => {
    const system = await startSystem({ rules: [rule('ping', say('pong'))] });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'ping');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'pong'), {
      timeoutMs: 60_000,
    });

    // The bridge's snapshot (bridge.json, where status reads the session id and the session's cost) is
    // written at most every 250 ms, and the gateway records the turn's cost as it ends, so either can
    // trail the answer: read the status until all three are there.
    const settled = (out: string) => {
      const agent = JSON.parse(out).agents?.[0];
      const claude = agent?.claude?.[0];
      return (
        typeof claude?.sessionId === 'string' &&
        typeof claude?.sessionCostUsd === 'number' &&
        agent?.cost?.todayUsd > 0
      );
    };
    let status = cli(['--config', system.configPath, 'status', 'e2e', '--json']);
    for (let i = 0; i < 50 && !settled(status.out); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = cli(['--config', system.configPath, 'status', 'e2e', '--json']);
    }
    expect(status.err).toBe('');
    const [agent] = JSON.parse(status.out).agents;
    expect(agent.gateway.running.map((p: { pid: number }) => p.pid)).toEqual([system.pid('gateway')]);
    expect(agent.bridge.running.map((p: { pid: number }) => p.pid)).toEqual([system.pid('bridge')]);
    expect(agent.bridge.connected).toBe(true);
    expect(agent.claude).toHaveLength(1);
    expect(agent.claude[0]).toMatchObject({ state: 'alive', sessionId: expect.any(String) });
    expect(agent.store).toMatchObject({ runningTurns: [], openPrompts: 0, schemaCurrent: true });
    // The turn's cost as the CLI reported it: today's (the gateway's record) and the session's (the bridge's).
    expect(agent.cost.todayUsd).toBeGreaterThan(0);
    expect(agent.cost.conversations).toEqual([
      { conversation: `c${chatId}`, todayUsd: agent.cost.todayUsd, sessionUsd: agent.cost.todayUsd },
    ]);
    expect(status.code).toBe(0);
    const shown = cli(['--config', system.configPath, 'status']).out;
    expect(shown).toMatch(/^e2e: serving$/m);
    expect(shown).toMatch(
      new RegExp(`^ {2}cost {5}\\[c${chatId}\\] \\$[\\d.]+ today, \\$[\\d.]+ this session$`, 'm'),
    );

    const doctor = await cliAsync(['--config', system.configPath, 'doctor', 'e2e', '--json']);
    const report = JSON.parse(doctor.out);
    const errors = report.agents[0].findings.filter((f: { level: string }) => f.level === 'error');
    expect(errors).toEqual([]);
    expect(report.agents[0].findings).toContainEqual(
      expect.objectContaining({ path: 'agents[0].token', message: expect.stringContaining('@') }),
    );
    expect(doctor.code).toBe(0);

    const dest = path.join(system.dir, 'backup');
    const backup = cli(['--config', system.configPath, 'backup', 'e2e', dest]);
    expect(backup.code, backup.err).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(dest, 'manifest.json'), 'utf8'));
    expect(manifest.files).toContain('gateway/gateway.sqlite');
    expect(manifest.files).toContain(`bridge/conversations/c${chatId}/bridge.json`);
    expect(manifest.files.some((f: string) => f.endsWith('-wal'))).toBe(false);
    // The copy is a whole database: the update that just ran is in it.
    const copy = inspectGatewayStore(path.join(dest, 'gateway', 'gateway.sqlite'));
    expect(copy.schemaCurrent).toBe(true);
    expect(copy.lastUpdateId).toBeGreaterThan(0);
    expect(cli(['--config', system.configPath, 'backup', 'e2e', dest]).code).toBe(1); // never overwrites

    await system.kill('bridge', 'SIGTERM');
    const down = cli(['--config', system.configPath, 'status', 'e2e', '--json']);
    expect(down.code).toBe(3);
    expect(JSON.parse(down.out).agents[0].bridge).toMatchObject({ running: [], connected: false });
  }, 120_000);
});
