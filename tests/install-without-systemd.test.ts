/**
 * `deploy/install.sh` and `deploy/uninstall.sh` on a host whose init is not systemd (Docker, Lima, this
 * CI machine: systemd's tools installed, systemd not PID 1). The install used to copy a release and
 * die at `systemctl daemon-reload` with systemd's raw "Failed to connect to bus", half done; it must
 * stop before changing anything and say what to do instead. The uninstall used to die at its first
 * `systemctl` having removed nothing; it must remove the files and say there were no units to stop.
 * And `--rollback` must put back the previous release's unit files, not leave the newer ones.
 *
 * The system cases run as root in a private mount namespace with a copy of /etc and an empty /var/lib
 * (as tests/install.test.ts does), so users made or removed there never reach this host.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outputOf } from './processes.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Root here, allowed a private mount namespace, and systemd not running: the case under test. */
const noSystemd =
  process.getuid?.() === 0 &&
  spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0 &&
  spawnSync('systemctl', ['show', '--property=Version']).status !== 0;

/** Runs `script` in bash inside a private mount namespace whose /etc is a copy and /var/lib empty. */
function contained(
  host: string,
  script: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const setup = `set -uo pipefail
mkdir -p "$H/etc" "$H/var-lib"
cp -a /etc/. "$H/etc/"
mount --bind "$H/etc" /etc
mount --bind "$H/var-lib" /var/lib
`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-m', '--propagation', 'private', 'bash', '-c', setup + script], {
      env: {
        ...process.env,
        H: host,
        REPO: repo,
        SWITCHYARD_PREFIX: path.join(host, 'opt'),
        SWITCHYARD_BIN_DIR: path.join(host, 'bin'),
        SWITCHYARD_SYSTEMD_DIR: path.join(host, 'systemd'),
        SWITCHYARD_NODE: process.execPath,
        SWITCHYARD_CONFIG: '',
        ...env,
      },
    });
    const output = outputOf(child);
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout: output.out(), stderr: output.err() }));
  });
}

/** The sections of a script's stdout, by their `=== name` headers. */
function sections(stdout: string): Record<string, string> {
  const parts = stdout.split(/^=== (\w+)$/m);
  const out: Record<string, string> = {};
  for (let i = 1; i < parts.length; i += 2) out[parts[i] ?? ''] = parts[i + 1] ?? '';
  return out;
}

describe('install and uninstall on a host without systemd', () => {
  let host = '';
  beforeEach(() => {
    host = mkdtempSync(path.join(tmpdir(), 'sy-nosystemd-'));
    chmodSync(host, 0o755);
  });
  afterEach(() => rmSync(host, { recursive: true, force: true }));

  it.skipIf(!noSystemd)(
    'install.sh stops before changing anything, names what is missing and the way to run here',
    async () => {
      const result = await contained(
        host,
        `echo "=== install"
bash "$REPO/deploy/install.sh"
echo "status=$?"
echo "=== left"
ls -A "$H" | grep -Ev '^(etc|var-lib)$'
[ -e /etc/switchyard ] && echo "etc/switchyard created"
getent passwd switchyard >/dev/null && echo "user switchyard created"
ls -A /var/lib
true
`,
      );
      const out = sections(result.stdout);
      expect(out.install, result.stderr).toContain('status=1');
      expect(result.stderr).toContain('install.sh: systemd is not running on this host (PID 1 is ');
      expect(result.stderr).toContain('nothing was installed');
      expect(result.stderr).toContain('SWITCHYARD_NO_SYSTEM=1');
      expect(result.stderr).toContain('switchyard run NAME');
      expect(result.stderr).not.toContain('Failed to connect to bus');
      // Nothing packed or copied, no user, no config, no units.
      expect(out.install).not.toContain('packing this checkout');
      expect(out.left?.trim()).toBe('');
    },
    120_000,
  );

  it.skipIf(!noSystemd)(
    'uninstall.sh removes the files, says there were no units to stop, and --purge removes users and state',
    async () => {
      // What an install leaves (made by hand: packing takes minutes), and an agent made by add-agent. The
      // users get uids of their own: a test beside this one makes its users in a private copy of the same
      // /etc/passwd, so `useradd --system` hands both the same uid, and `userdel` refuses a user whose uid
      // runs a process there (seen: "removed user sy-demo" missing).
      const result = await contained(
        host,
        `mkdir -p "$H/opt/releases/20260101T000000Z" "$H/bin" "$H/systemd" /etc/switchyard/credentials /var/lib/switchyard/demo/bridge
ln -s releases/20260101T000000Z "$H/opt/current"
echo '#!/bin/sh' >"$H/bin/switchyard"
touch "$H/systemd/switchyard-gateway@.service" "$H/systemd/switchyard-agent@.service"
printf 'agents:\\n  - name: demo\\n    workDir: %s\\n' "$H/srv/demo" >/etc/switchyard/switchyard.yaml
useradd --system --user-group --uid 59998 --home-dir /var/lib/switchyard --no-create-home switchyard
useradd --system --user-group --uid 59999 --home-dir /var/lib/switchyard/demo/bridge --no-create-home sy-demo
echo "=== uninstall"
bash "$REPO/deploy/uninstall.sh"
echo "status=$?"
echo "=== after"
ls -A "$H" | grep -Ev '^(etc|var-lib)$'
ls -A "$H/systemd" "$H/bin" | grep -v ':$'
[ -f /etc/switchyard/switchyard.yaml ] && echo "config kept"
getent passwd sy-demo >/dev/null && echo "sy-demo kept"
echo "=== purge"
bash "$REPO/deploy/uninstall.sh" --purge
echo "status=$?"
echo "=== purged"
[ -e /etc/switchyard ] && echo "etc/switchyard left"
[ -e /var/lib/switchyard ] && echo "state left"
getent passwd sy-demo >/dev/null && echo "sy-demo left"
getent passwd switchyard >/dev/null && echo "switchyard left"
true
`,
      );
      const out = sections(result.stdout);
      expect(out.uninstall, `${result.stdout}\n${result.stderr}`).toContain('status=0');
      expect(out.uninstall).toContain('uninstall.sh: systemd is not running on this host: no unit to stop');
      expect(result.stderr).not.toContain('Failed to connect to bus');
      // The directories stay (they are /etc/systemd/system and /usr/local/bin), empty of ours.
      expect(out.after?.split('\n').filter(Boolean)).toEqual([
        'bin',
        'systemd',
        'config kept',
        'sy-demo kept',
      ]);
      expect(out.purge).toContain('status=0');
      expect(out.purge).toContain('removed user sy-demo');
      expect(out.purged?.trim()).toBe('');
      // Nothing leaked out of the namespace.
      expect(spawnSync('getent', ['passwd', 'sy-demo']).status).not.toBe(0);
    },
    120_000,
  );
});

/** Root and a private mount namespace, whatever the init: the install can run in a container-like root. */
const canContain =
  process.getuid?.() === 0 && spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0;

describe('a system install', () => {
  let host = '';
  beforeEach(() => {
    host = mkdtempSync(path.join(tmpdir(), 'sy-sysinstall-'));
    chmodSync(host, 0o755);
  });
  afterEach(() => rmSync(host, { recursive: true, force: true }));

  it.skipIf(!canContain)(
    "makes the switchyard group before giving it the config (the gateways' user must read it)",
    async () => {
      // A systemctl stand-in that answers as a running systemd would: the rest of the install is real.
      mkdirSync(path.join(host, 'fake-bin'));
      writeFileSync(path.join(host, 'fake-bin', 'systemctl'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const result = await contained(
        host,
        `bash "$REPO/deploy/install.sh" >/dev/null || exit 1
echo "=== facts"
stat -c '%n %U:%G %a' /etc/switchyard/switchyard.yaml
`,
        { PATH: `${path.join(host, 'fake-bin')}:${process.env.PATH}` },
      );
      expect(result.status, result.stderr).toBe(0);
      expect(sections(result.stdout).facts).toContain('/etc/switchyard/switchyard.yaml root:switchyard 640');
    },
    300_000,
  );
});

describe('install.sh --rollback', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sy-rollback-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("puts back the previous release's unit files with the release", () => {
    const prefix = path.join(dir, 'opt');
    const systemd = path.join(dir, 'systemd');
    // Two releases whose units differ (made by hand: only their deploy/ matters to a rollback).
    for (const [release, marker] of [
      ['20260101T000000Z', 'older'],
      ['20260102T000000Z', 'newer'],
    ] as const) {
      mkdirSync(path.join(prefix, 'releases', release, 'deploy'), { recursive: true });
      for (const unit of ['switchyard-gateway@.service', 'switchyard-agent@.service']) {
        writeFileSync(
          path.join(prefix, 'releases', release, 'deploy', unit),
          `# ${marker} release\nExecStart=/usr/bin/env node /opt/switchyard/packages/cli/dist/main.js x %i\n`,
        );
      }
    }
    symlinkSync('releases/20260102T000000Z', path.join(prefix, 'current'));
    mkdirSync(systemd);
    for (const unit of ['switchyard-gateway@.service', 'switchyard-agent@.service']) {
      writeFileSync(path.join(systemd, unit), '# newer release\n');
    }
    const result = spawnSync('bash', [path.join(repo, 'deploy/install.sh'), '--rollback'], {
      env: {
        ...process.env,
        SWITCHYARD_NO_SYSTEM: '1',
        SWITCHYARD_PREFIX: prefix,
        SWITCHYARD_SYSTEMD_DIR: systemd,
        SWITCHYARD_NODE: process.execPath,
      },
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('current is now 20260101T000000Z');
    for (const unit of ['switchyard-gateway@.service', 'switchyard-agent@.service']) {
      const text = readFileSync(path.join(systemd, unit), 'utf8');
      expect(text).toContain('# older release');
      // Rewritten as an install writes them: this node, the current release.
      expect(text).toContain(
        `ExecStart=${process.execPath} ${prefix}/current/packages/cli/dist/main.js x %i`,
      );
    }
  });
});
