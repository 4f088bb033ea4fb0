/**
 * What `deploy/` ships must be usable as shipped: the example config validates, the units parse, the
 * install script is valid shell, and the agent unit keeps claude alive across a bridge restart.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MAIN } from './system.js';

const deploy = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../deploy');

describe('deploy/', () => {
  it('the example config is valid, and `config check` names what it points at that this host lacks', () => {
    const result = spawnSync(
      process.execPath,
      [MAIN, '--config', path.join(deploy, 'switchyard.example.yaml'), 'config', 'check'],
      {
        encoding: 'utf8',
        env: { ...process.env, SWITCHYARD_CONFIG: '' },
      },
    );
    expect(result.stderr).not.toContain('is not a valid Switchyard config');
    // The shape is right; the token file and working directory are the operator's to create.
    expect(result.stderr).toContain('agents[0].token: cannot read /etc/switchyard/demo.token');
    expect(result.status).toBe(1);
  });

  it('the install script is valid shell', () => {
    expect(spawnSync('bash', ['-n', path.join(deploy, 'install.sh')]).status).toBe(0);
  });

  it('the agent unit signals only the bridge, so claude outlives a restart', () => {
    const unit = readFileSync(path.join(deploy, 'switchyard-agent@.service'), 'utf8');
    expect(unit).toMatch(/^KillMode=process$/m);
    expect(unit).toMatch(/^ExecStart=.* bridge %i$/m);
    for (const name of ['switchyard-agent@.service', 'switchyard-gateway@.service']) {
      const text = readFileSync(path.join(deploy, name), 'utf8');
      // Both units share the runtime directory (the socket) and keep it across each other's restarts.
      expect(text).toMatch(/^RuntimeDirectory=switchyard\/%i$/m);
      expect(text).toMatch(/^RuntimeDirectoryPreserve=yes$/m);
    }
  });

  it.skipIf(!existsSync('/usr/bin/systemd-analyze'))('systemd accepts both units', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-units-'));
    try {
      const units = ['switchyard-gateway', 'switchyard-agent'].map((name) => {
        const target = path.join(dir, `${name}@demo.service`);
        copyFileSync(path.join(deploy, `${name}@.service`), target);
        return target;
      });
      const result = spawnSync('systemd-analyze', ['verify', ...units], { encoding: 'utf8' });
      expect(
        result.stderr.split('\n').filter((line) => line.includes(dir) && !/Cannot add dependency/.test(line)),
      ).toEqual([]);
      expect(result.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
