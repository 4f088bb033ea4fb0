/**
 * What `switchyard config check` prints: no "N agent(s)" summary for a file that is refused (it read as
 * if the file were fine), and a finding that is the same for several agents (outside systemd, Claude
 * can read the token) said once, naming each agent's path, instead of once an agent.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { configCheckCommand } from '../src/config-check.js';

const TOKEN = '123456:AAH-abcdefghijklmnopqrstuvwxyz';
let dir: string;
let out: string[];
let err: string[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sy-config-command-'));
  mkdirSync(path.join(dir, 'work'));
  out = [];
  err = [];
  vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
  vi.spyOn(console, 'error').mockImplementation((line: string) => void err.push(line));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

function check(yaml: string): number {
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, yaml);
  return configCheckCommand(file, { env: { PATH: '' }, cwd: dir }, false);
}

const agent = (name: string, extra = '') =>
  `  - { name: ${name}, token: "${TOKEN}", allow: [1], workDir: ${path.join(dir, 'work')}${extra} }\n`;

describe('config check as printed', () => {
  it('prints no agent summary for a file it refuses', () => {
    expect(check(`agents:\n${agent('a', ', wrkDir: /x')}`)).toBe(2);
    expect(out.join('\n')).not.toContain('agent(s)');
    expect(err[0]).toMatch(/^ERROR agents\[0\]: unknown setting "wrkDir" \(did you mean workDir\?\)/);
  });

  it('says a warning shared by every agent once, naming each path', () => {
    check(`agents:\n${agent('a')}${agent('b')}`);
    expect(out[0]).toMatch(/: 2 agent\(s\)$/);
    const warnings = err.filter((line) =>
      line.includes('outside systemd one user runs the gateway and Claude'),
    );
    expect(warnings).toEqual([
      expect.stringMatching(/^warn {2}agents\[0\]\.token, agents\[1\]\.token: outside systemd/),
    ]);
  });

  it("says a systemd credential's warning once for every agent, keeping each agent's fix", () => {
    const credential = (name: string) =>
      `  - { name: ${name}, token: { credential: telegram-token }, allow: [1], workDir: ${path.join(dir, 'work')} }\n`;
    check(`agents:\n${credential('a')}${credential('b')}`);
    const warnings = err.filter((line) => line.includes('systemd credential telegram-token'));
    expect(warnings).toEqual([
      expect.stringMatching(
        /^warn {2}agents\[0\]\.token, agents\[1\]\.token: systemd credential telegram-token: /,
      ),
    ]);
    expect(warnings[0]).toContain('/etc/switchyard/credentials/a.token');
    expect(warnings[0]).toContain('/etc/switchyard/credentials/b.token');
  });
});
