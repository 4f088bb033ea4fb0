/**
 * `doctor`'s reading of ssh (`link-check.ts`) as a table: what OpenSSH 9.2's client prints (captured
 * against a real sshd with the link's own options) for each way a link fails, and the verdict in
 * words. The probe itself, against a real sshd, is in tests/remote-doctor.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentConfig } from '../src/agent-config.js';
import {
  classifySsh,
  describeSsh,
  peerFindings,
  probeSocketPath,
  type SshVerdict,
} from '../src/link-check.js';
import type { RemoteBridge } from '../src/remote-bridge-config.js';

const REMOTE: RemoteBridge = {
  host: 'build-box',
  socketPath: '/var/lib/switchyard/demo/bridge/link.sock',
  ssh: {
    user: 'sy-demo',
    port: 2222,
    identityFile: '/etc/switchyard/ssh/demo.key',
    knownHosts: '/etc/switchyard/ssh/known_hosts',
    aliveIntervalSeconds: 5,
  },
};

const CASES: ReadonlyArray<
  readonly [string, { forwarded?: boolean; code?: number; stderr: string }, SshVerdict['kind']]
> = [
  [
    'the worker listens',
    {
      forwarded: true,
      code: 143,
      stderr: 'debug1: remote forward success for: listen /x/doctor.sock:-2, connect /tmp/p:-2\n',
    },
    'ok',
  ],
  [
    'an unknown host name',
    { stderr: 'ssh: Could not resolve hostname nowhere: Name or service not known\n' },
    'unresolved',
  ],
  [
    'a wrong port',
    { stderr: 'ssh: connect to host 127.0.0.1 port 42223: Connection refused\n' },
    'connection_refused',
  ],
  [
    'a silent network',
    { stderr: 'ssh: connect to host 10.9.9.9 port 22: Connection timed out\n' },
    'unreachable',
  ],
  ['no route', { stderr: 'ssh: connect to host build-box port 22: No route to host\n' }, 'unreachable'],
  [
    'a host key not in known_hosts',
    {
      stderr:
        'No ED25519 host key is known for [127.0.0.1]:42222 and you have requested strict checking.\nHost key verification failed.\n',
    },
    'host_key_unknown',
  ],
  [
    'a host key that changed',
    {
      stderr:
        '@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n@@@@@\n' +
        'Host key for [127.0.0.1]:42222 has changed and you have requested strict checking.\nHost key verification failed.\n',
    },
    'host_key_changed',
  ],
  ['a key the worker refuses', { stderr: 'root@127.0.0.1: Permission denied (publickey).\n' }, 'key_refused'],
  [
    'a key file that is not there',
    {
      stderr:
        'Warning: Identity file /etc/switchyard/ssh/demo.key not accessible: No such file or directory.\n' +
        'sy-demo@build-box: Permission denied (publickey).\n',
    },
    'key_unusable',
  ],
  [
    'a key others may read',
    {
      stderr:
        'Permissions 0644 for \'id2\' are too open.\nLoad key "id2": bad permissions\nroot@127.0.0.1: Permission denied (publickey).\n',
    },
    'key_unusable',
  ],
  [
    'a socket directory missing on the worker (sshd: unix_listener: cannot bind … No such file)',
    {
      stderr:
        'Error: remote port forwarding failed for listen path /var/lib/switchyard/demo/bridge/doctor.sock\n',
    },
    'forward_refused',
  ],
  [
    'a socket path over the limit',
    { stderr: "Bad remote forwarding specification '/very/long.sock:/tmp/p'\n" },
    'path_too_long',
  ],
  [
    'the probe timed out',
    { stderr: "\nOperation timed out (no answer within the probe's time)" },
    'unreachable',
  ],
  [
    'anything else',
    { code: 255, stderr: 'debug1: x\nkex_exchange_identification: read: Connection reset by peer\n' },
    'other',
  ],
];

describe("doctor's reading of ssh", () => {
  it.each(CASES)('%s', (_what, outcome, kind) => {
    const verdict = classifySsh({
      forwarded: outcome.forwarded ?? false,
      code: outcome.code ?? 255,
      stderr: outcome.stderr,
    });
    expect(verdict.kind).toBe(kind);
    // Every verdict is said in words with a fix, naming the worker as the config does.
    const said = describeSsh(verdict, REMOTE, probeSocketPath(REMOTE));
    if (kind === 'ok') expect(said.level).toBe('ok');
    else {
      expect(said.level).toBe('error');
      expect(said.fix).toBeTruthy();
      expect(`${said.message} ${said.fix}`).toMatch(/build-box|demo\.key|known_hosts|link\.sock/);
    }
  });

  it('says what the worker must change for a refused key, and never reads the key aloud', () => {
    const said = describeSsh({ kind: 'key_refused' }, REMOTE, probeSocketPath(REMOTE));
    expect(said.message).toBe(
      'build-box refused the key /etc/switchyard/ssh/demo.key for user sy-demo (Permission denied)',
    );
    expect(said.fix).toContain('restrict,port-forwarding');
    expect(said.fix).toContain('~sy-demo/.ssh/authorized_keys');
  });

  it("probes beside the worker's socket, never on it (the running link's would be replaced)", () => {
    expect(probeSocketPath(REMOTE)).toBe('/var/lib/switchyard/demo/bridge/doctor.sock');
    const deep = { ...REMOTE, socketPath: `/${'d'.repeat(96)}/link.sock` };
    expect(probeSocketPath(deep)).toBe(`/${'d'.repeat(96)}/d.sock`);
  });
});

describe("doctor's reading of the gateway's peer record", () => {
  const agent = { name: 'demo', bridge: REMOTE } as AgentConfig;
  const withRecord = (record: object | undefined, link = true) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-peer-'));
    try {
      if (record) writeFileSync(path.join(dir, 'bridge-peer.json'), JSON.stringify({ pid: 1, ...record }));
      return peerFindings(agent, 0, dir, { running: link, how: link ? 'pid 7' : 'no process' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('says the gateway refused the bridge for another protocol version, in its words, with the fix', () => {
    const message =
      'protocol version 9 is not supported by this gateway (release a on gw), which speaks version 8';
    const found = withRecord({
      connected: false,
      since: 1,
      refused: { code: 'version_mismatch', message, at: 5 },
    });
    expect(found).toContainEqual({
      level: 'error',
      path: 'agents[0].bridge',
      message: `the gateway refused the bridge: ${message}`,
      fix: 'install the same Switchyard release on build-box as here (deploy/README.md, "Install"), then systemctl restart switchyard-agent@demo there',
    });
    // A bridge that connected after the refusal (the release was fixed) clears it.
    const later = withRecord({
      connected: true,
      since: 9,
      peer: { instanceId: 'b', host: 'build-box', release: 'r2' },
      roundTrip: { ms: 2, at: 10 },
      refused: { code: 'version_mismatch', message, at: 5 },
    });
    expect(later.filter((f) => f.level === 'error')).toEqual([]);
    expect(later.map((f) => f.message)).toContain(
      'the bridge is connected from build-box, release r2; round trip 2 ms',
    );
  });

  it('says when the link does not run, and when no bridge comes through a running one', () => {
    expect(withRecord(undefined, false)[0]).toMatchObject({
      level: 'warn',
      message:
        'the link to build-box is not running (no process), so the bridge there cannot reach the gateway',
    });
    expect(
      withRecord({ connected: false, since: 1, peer: { instanceId: 'b', host: 'old-box' } }),
    ).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'no bridge is connected through the link (the last came from old-box)',
      }),
    );
  });
});
