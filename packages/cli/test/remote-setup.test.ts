/**
 * What add-agent gives the worker of a bridge on another host (`remote-setup.ts`): the agent's entry
 * without anything only the gateway reads (the token, webhook secrets, the voice key), the key's
 * `authorized_keys` line restricted to forwarding, and the sshd block that narrows it to the socket.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { authorizedKeysLine, workerEntry, workerFiles, workerSshdConfig } from '../src/remote-setup.js';

const ENTRY = {
  name: 'demo',
  token: { credential: 'telegram-token' },
  allow: [1],
  workDir: '/srv/agents/demo',
  stateDir: '/var/lib/switchyard/demo',
  webhooks: { hooks: [{ name: 'gh', kind: 'github', secret: { credential: 'gh-secret' } }] },
  voice: { kind: 'http', key: { file: '/etc/switchyard/voice.key' } },
  bridge: { host: 'build-box', ssh: { identityFile: '/etc/switchyard/ssh/demo.key', knownHosts: '/k' } },
};

describe("the worker's files", () => {
  it("hold the agent's entry without the token, the webhooks and the voice settings", () => {
    expect(workerEntry(ENTRY)).toEqual({
      name: 'demo',
      allow: [1],
      workDir: '/srv/agents/demo',
      stateDir: '/var/lib/switchyard/demo',
      bridge: ENTRY.bridge,
    });
    const [config] = workerFiles(
      ENTRY,
      { name: 'demo', stateDir: '/var/lib/switchyard/demo' },
      { user: 'sy-demo' },
      'ssh-ed25519 AAAA x',
    );
    expect(config?.file).toBe('/etc/switchyard/switchyard.yaml');
    expect(parse(config?.content ?? '')).toEqual({ agents: [workerEntry(ENTRY)] });
  });

  it("put the key in sy-NAME's authorized_keys for forwarding alone, and narrow sshd to the socket", () => {
    expect(authorizedKeysLine('ssh-ed25519 AAAAC3 switchyard-link-demo\n')).toBe(
      'restrict,port-forwarding ssh-ed25519 AAAAC3 switchyard-link-demo',
    );
    const files = workerFiles(
      ENTRY,
      { name: 'demo', stateDir: '/var/lib/switchyard/demo' },
      { user: 'sy-demo' },
      'k',
    );
    expect(files.map((f) => [f.file, f.mode.toString(8)])).toEqual([
      ['/etc/switchyard/switchyard.yaml', '640'],
      ['/var/lib/switchyard/demo/bridge/.ssh/authorized_keys', '600'],
      ['/etc/ssh/sshd_config.d/switchyard-demo.conf', '644'],
    ]);
    const sshd = workerSshdConfig('sy-demo');
    expect(sshd).toContain('Match User sy-demo');
    for (const line of [
      'StreamLocalBindUnlink yes',
      'AllowStreamLocalForwarding remote',
      'PermitListen none',
      'PermitOpen none',
    ]) {
      expect(sshd).toContain(`    ${line}\n`);
    }
  });
});
