import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { checkConfigResources } from '../src/config-check.js';
import type { Finding } from '../src/finding.js';

const TOKEN = '123456:AAH-abcdefghijklmnopqrstuvwxyz';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sy-config-check-'));
});
afterEach(() => {
  chmodSync(dir, 0o700);
  rmSync(dir, { recursive: true, force: true });
});

/** A fake `claude`: an executable file in `dir/bin`. */
function fakeClaude(): string {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(bin, 'claude'), '#!/bin/sh\n', { mode: 0o755 });
  return bin;
}

function check(agentYaml: string, env: Record<string, string> = {}): Finding[] {
  const file = path.join(dir, 'switchyard.yaml');
  const config = parseConfig(`agents:\n  - name: demo\n    allow: [1]\n${agentYaml}`, file, {
    env,
    cwd: dir,
  });
  return checkConfigResources(config, { env, cwd: dir });
}

const problems = (findings: Finding[]) =>
  findings.filter((f) => f.level === 'error').map((f) => `${f.path}: ${f.message}`);

describe('config check of what the config points at', () => {
  it('passes when the token file, working directory and claude binary are all there', () => {
    writeFileSync(path.join(dir, 'demo.token'), `${TOKEN}\n`);
    mkdirSync(path.join(dir, 'work'));
    const findings = check('    token: { file: demo.token }\n    workDir: work\n', { PATH: fakeClaude() });
    expect(problems(findings)).toEqual([]);
    expect(findings.map((f) => f.path)).toEqual([
      'agents[0].token',
      'agents[0].workDir',
      'agents[0].stateDir',
      'agents[0].claude.bin',
      'agents[0].runtimeDir',
      'agents[0].token',
    ]);
  });

  it('says where the gateway socket goes: within 107 bytes, moved under /tmp from a deep state directory', () => {
    const deep = `${'a-checkout-nested-deep/'.repeat(4)}state`;
    const findings = check(`    workDir: .\n    stateDir: ${deep}\n`, { PATH: fakeClaude() });
    const sockets = findings.filter(
      (f) => f.path === 'agents[0].runtimeDir' || f.path === 'agents[0].stateDir',
    );
    expect(sockets.map((f) => f.level)).toEqual(['ok', 'ok']);
    expect(sockets.at(-1)?.message).toMatch(/^socket \/.* \(\d+ of 107 bytes\)$/);
  });

  it('reports a missing token file, working directory and claude by their config paths', () => {
    const findings = check('    token: { file: missing.token }\n    workDir: nowhere\n', {
      PATH: path.join(dir, 'empty'),
    });
    expect(problems(findings)).toEqual([
      `agents[0].token: cannot read ${path.join(dir, 'missing.token')} (ENOENT)`,
      `agents[0].workDir: the working directory ${path.join(dir, 'nowhere')} does not exist`,
      'agents[0].claude.bin: the Claude CLI "claude" was not found on PATH: install it or configure its absolute path',
    ]);
    expect(findings.every((f) => f.level === 'ok' || f.fix)).toBe(true);
  });

  it('reports a token variable that is unset or not a token without printing its value', () => {
    mkdirSync(path.join(dir, 'work'));
    const unset = check('    token: { env: DEMO_TOKEN }\n    workDir: work\n', { PATH: fakeClaude() });
    expect(problems(unset)).toEqual(['agents[0].token: environment variable DEMO_TOKEN is empty or missing']);
    const wrong = check('    token: { env: DEMO_TOKEN }\n    workDir: work\n', {
      PATH: fakeClaude(),
      DEMO_TOKEN: 'not-a-token-but-secret',
    });
    expect(problems(wrong)).toEqual([
      'agents[0].token: environment variable DEMO_TOKEN does not hold a bot token',
    ]);
    expect(JSON.stringify(wrong)).not.toContain('not-a-token-but-secret');
  });

  it('reports a working directory this user cannot write', () => {
    if (process.getuid?.() === 0) return; // root writes everywhere: nothing to test
    const work = path.join(dir, 'work');
    mkdirSync(work, { mode: 0o500 });
    const findings = check(`    token: "${TOKEN}"\n    workDir: work\n`, { PATH: fakeClaude() });
    expect(problems(findings)).toEqual([
      `agents[0].workDir: the working directory ${work} is not writable by this user`,
    ]);
  });

  it('accepts a state directory that does not exist yet under a writable parent, and not a file', () => {
    mkdirSync(path.join(dir, 'work'));
    const later = check(`    token: "${TOKEN}"\n    workDir: work\n    stateDir: a/b/state\n`, {
      PATH: fakeClaude(),
    });
    expect(later.find((f) => f.path === 'agents[0].stateDir')).toMatchObject({
      level: 'ok',
      message: expect.stringContaining('will be created'),
    });
    writeFileSync(path.join(dir, 'file'), '');
    const file = check(`    token: "${TOKEN}"\n    workDir: work\n    stateDir: file/state\n`, {
      PATH: fakeClaude(),
    });
    expect(problems(file)).toEqual([`agents[0].stateDir: ${path.join(dir, 'file')} is not a directory`]);
  });
});
