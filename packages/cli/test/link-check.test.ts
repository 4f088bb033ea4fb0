/**
 * `doctor`'s reading of ssh (`link-check.ts`) as a table: what OpenSSH 9.2's client prints (captured
 * against a real sshd with the link's own options) for each way a link fails, and the verdict in
 * words. The probe itself, against a real sshd, is in tests/remote-doctor.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { classifySsh, describeSsh, probeSocketPath, type SshVerdict } from '../src/link-check.js';
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
