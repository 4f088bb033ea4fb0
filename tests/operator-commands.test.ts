/**
 * The operator's small commands as the built `switchyard` runs them: `--version` (it failed with
 * ERR_PARSE_ARGS_UNKNOWN_OPTION) and `version`; `status --cost` across agents; `backup` saying it holds
 * the Claude login and `restore` putting it back.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openGatewayStore } from '@switchyard/gateway';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAIN } from './system.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sy-operator-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: dir,
    env: { ...process.env, SWITCHYARD_CONFIG: '' },
    encoding: 'utf8',
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe('operator commands', () => {
  it('--version, -V and version name the version; --json as JSON', () => {
    const pkg = JSON.parse(readFileSync(path.join(path.dirname(MAIN), '..', 'package.json'), 'utf8'));
    for (const args of [['--version'], ['-V'], ['version']]) {
      const { code, out, err } = cli(...args);
      expect(err, args.join(' ')).toBe('');
      expect(code).toBe(0);
      expect(out.split('\n')[0]).toMatch(
        new RegExp(`^switchyard ${pkg.version.replaceAll('.', '\\.')}( \\(\\w+\\))?$`),
      );
      expect(out).toContain(`node ${process.versions.node}`);
    }
    expect(JSON.parse(cli('version', '--json').out)).toMatchObject({ version: pkg.version });
    expect(cli('help').out).toContain('version ');
  });

  it('status --cost lists every agent, today and this month, with the total', () => {
    writeFileSync(
      path.join(dir, 'switchyard.yaml'),
      'agents:\n  - { name: alpha, allow: [1], workDir: /w }\n  - { name: beta, allow: [1], workDir: /w }\n',
    );
    mkdirSync(path.join(dir, '.switchyard', 'alpha', 'state', 'gateway'), { recursive: true });
    const store = openGatewayStore(
      path.join(dir, '.switchyard', 'alpha', 'state', 'gateway', 'gateway.sqlite'),
    );
    store.spendStarted('t1', { chatId: 1 }, 1);
    store.spendEnded('t1', { chatId: 1 }, 0.25, Date.now());
    store.close();
    const shown = cli('status', '--cost');
    expect(shown.code, shown.err).toBe(0);
    const lines = shown.out.trim().split('\n');
    expect(lines[0]).toMatch(/^agent +today +this month$/);
    expect(lines[1]).toMatch(/^alpha +\$0\.250 +\$0\.250 +1 turn\(s\) in \d{4}-\d\d \(UTC\)$/);
    expect(lines[2]).toMatch(/^beta +- +- +no record: its gateway has not run here/);
    expect(lines[3]).toMatch(/^total +\$0\.250 +\$0\.250$/);
    expect(JSON.parse(cli('status', '--cost', '--json').out).total).toEqual({
      todayUsd: 0.25,
      monthUsd: 0.25,
    });
  });

  it('backup says it holds the Claude login, and restore puts the state back', () => {
    writeFileSync(
      path.join(dir, 'switchyard.yaml'),
      'agents:\n  - { name: demo, allow: [1], workDir: /w }\n',
    );
    const state = path.join(dir, '.switchyard', 'demo', 'state');
    mkdirSync(path.join(state, 'gateway'), { recursive: true });
    openGatewayStore(path.join(state, 'gateway', 'gateway.sqlite')).close();
    mkdirSync(path.join(state, 'bridge', '.claude'), { recursive: true });
    writeFileSync(
      path.join(state, 'bridge', '.claude', '.credentials.json'),
      '{"claudeAiOauth":{"accessToken":"x"}}',
    );
    const backup = path.join(dir, 'backup');
    const saved = cli('backup', 'demo', backup);
    expect(saved.code, saved.err).toBe(0);
    expect(saved.err).toContain("it holds the agent's Claude login (bridge/.claude/.credentials.json)");

    rmSync(path.join(state, 'bridge', '.claude'), { recursive: true });
    expect(cli('restore', 'demo').code).toBe(2); // names what it needs
    const restored = cli('restore', 'demo', backup);
    expect(restored.code, restored.err).toBe(0);
    expect(restored.err).toContain(`restored 2 file(s) of agent "demo" into ${state}`);
    expect(restored.err).toMatch(/the state that was there is kept in .*\.before-restore-\d{8}T\d{6}Z/);
    expect(readFileSync(path.join(state, 'bridge', '.claude', '.credentials.json'), 'utf8')).toContain(
      'claudeAiOauth',
    );
  });
});
