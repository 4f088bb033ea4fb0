import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { exchangeFor, socketAccess } from '../src/services.js';

const yaml = 'agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n';

describe('socketAccess', () => {
  it("opens the socket to the runtime directory's group only under the systemd unit", () => {
    const systemd = {
      STATE_DIRECTORY: '/var/lib/switchyard/demo',
      RUNTIME_DIRECTORY: '/run/switchyard/demo',
    };
    const unit = parseConfig(yaml, '/etc/s.yaml', { env: systemd, cwd: '/' }).agents[0];
    const dev = parseConfig(yaml, '/etc/s.yaml', { env: {}, cwd: '/' }).agents[0];
    if (!unit || !dev) throw new Error('unreachable');
    expect(socketAccess(unit, systemd)).toEqual({ socketMode: 0o660, socketDirectoryMode: 0o750 });
    expect(socketAccess(dev, {})).toEqual({ socketMode: 0o600, socketDirectoryMode: 0o700 });
    // A runtimeDir of the config's own, not systemd's, is not shared with another user.
    const own = parseConfig(`${yaml}    runtimeDir: /srv/run\n`, '/etc/s.yaml', { env: systemd, cwd: '/' })
      .agents[0];
    if (!own) throw new Error('unreachable');
    expect(socketAccess(own, systemd)).toEqual({ socketMode: 0o600, socketDirectoryMode: 0o700 });
  });
});

describe('exchangeFor', () => {
  const config = `${yaml}    stateDir: /var/lib/switchyard/demo\n    runtimeDir: /run/switchyard/demo\n`;
  const agent = parseConfig(config, '/etc/s.yaml', { env: {}, cwd: '/' }).agents[0];
  if (!agent) throw new Error('unreachable');

  it('gives both services the same directory beside their own, shared with the agent group only under the units', () => {
    const gatewayUnit = {
      STATE_DIRECTORY: '/var/lib/switchyard/demo/gateway',
      RUNTIME_DIRECTORY: '/run/switchyard/demo',
    };
    const agentUnit = { STATE_DIRECTORY: '/var/lib/switchyard/demo/bridge' };
    const dir = '/var/lib/switchyard/demo/files';
    expect(exchangeFor(agent, 'gateway', gatewayUnit, 1234)).toEqual({ dir, group: 1234 });
    expect(exchangeFor(agent, 'bridge', agentUnit, 1234)).toEqual({ dir, group: 1234 });
    // One user runs both (`switchyard run`, the sandbox): private.
    expect(exchangeFor(agent, 'gateway', {}, 1234)).toEqual({ dir });
    expect(exchangeFor(agent, 'bridge', {}, 1234)).toEqual({ dir });
    // Another unit's directories are not this service's.
    expect(exchangeFor(agent, 'bridge', gatewayUnit, 1234)).toEqual({ dir });
  });
});
