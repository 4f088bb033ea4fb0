/**
 * Under the systemd units `switchyard.yaml` is readable by every agent's user, so the services refuse to
 * start with a secret in it: the real command, given the environment systemd gives a unit, exits with the
 * fix before it touches Telegram, and never prints the secret.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN } from './system.js';

const TOKEN = '4242:unit-secret-token-not-real-0000000';

describe('the services under a systemd unit', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const run = (service: 'gateway' | 'bridge', agent: Record<string, unknown>) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-unit-secrets-'));
    dirs.push(dir);
    const config = path.join(dir, 'switchyard.yaml');
    writeFileSync(
      config,
      JSON.stringify({
        agents: [{ name: 'demo', allow: [1], workDir: dir, stateDir: path.join(dir, 'state'), ...agent }],
      }),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, SWITCHYARD_CONFIG: config };
    Object.assign(env, {
      INVOCATION_ID: '0123456789abcdef',
      STATE_DIRECTORY: path.join(dir, 'state', service),
    });
    const result = spawnSync(process.execPath, [MAIN, service, 'demo'], {
      env,
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { code: result.status, err: result.stderr };
  };

  it('the gateway refuses an inline token, and the bridge a secret-looking claude.env entry, naming the fix', () => {
    const gateway = run('gateway', { token: TOKEN, apiRoot: 'http://127.0.0.1:9' });
    expect(gateway.code).toBe(2);
    expect(gateway.err).toMatch(/inline token .*every agent's Claude/);
    expect(gateway.err).toContain('/etc/switchyard/credentials/demo.token');
    expect(gateway.err).not.toContain(TOKEN);

    const bridge = run('bridge', { claude: { bin: '/bin/false', env: { GITHUB_TOKEN: 'ghp_not_real' } } });
    expect(bridge.code).toBe(2);
    expect(bridge.err).toMatch(/claude\.env GITHUB_TOKEN looks secret/);
    expect(bridge.err).not.toContain('ghp_not_real');
  });
});
