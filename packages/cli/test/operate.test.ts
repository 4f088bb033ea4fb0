/**
 * `switchyard logs AGENT` on a host whose units are installed but whose init is not systemd (a
 * container): it used to say the agent "has no systemd units here", which the operator could see was
 * untrue; it must say that systemd does not run them, and where the logs are instead.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { showLogs } from '../src/operate.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sy-operate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const agent = () =>
  parseConfig('agents:\n  - { name: ops, allow: [1], workDir: /w }\n', path.join(dir, 'switchyard.yaml'), {
    env: {},
    cwd: dir,
  }).agents[0] as NonNullable<ReturnType<typeof parseConfig>['agents'][0]>;

describe('logs without a running systemd', () => {
  it('says the installed units do not run here, and points at switchyard run', async () => {
    writeFileSync(path.join(dir, 'switchyard-agent@.service'), '[Service]\n');
    await expect(showLogs(agent(), false, { systemd: false, unitDir: dir })).rejects.toThrow(
      `the units are installed (${dir}) but systemd is not running on this host, so they never ran agent "ops"`,
    );
  });

  it('says there are no units when none are installed', async () => {
    await expect(showLogs(agent(), false, { systemd: false, unitDir: dir })).rejects.toThrow(
      'agent "ops" has no systemd units here: in development its logs are the output of `switchyard run ops`',
    );
  });
});
