/**
 * `deploy/install.sh` as far as it can run without root: a staging install (`SWITCHYARD_NO_SYSTEM=1`)
 * into a temporary prefix. It must install only what runs (no .git, sources, tests, dev dependencies or
 * local state), leave an executable `switchyard` that works, keep the previous release on an upgrade,
 * never overwrite the operator's config, and roll back to the previous release. The units and the
 * command run the node the install found, by absolute path (a unit's PATH is not the operator's).
 *
 * The operator's whole path, with no checkout on the host: `deploy/pack.sh` makes the artifact, its own
 * `deploy/install.sh` installs it, `switchyard add-agent` creates an agent from nothing (config entry,
 * directories, token credential checked with Telegram) up to `doctor` passing, a second run changes
 * nothing, and `deploy/uninstall.sh` removes the software (and with --purge the config).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTelegramServer } from '@switchyard/sandbox';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { outputOf } from './processes.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const script = path.join(repo, 'deploy/install.sh');
const dir = mkdtempSync(path.join(tmpdir(), 'sy-install-'));
const env = {
  ...process.env,
  SWITCHYARD_NO_SYSTEM: '1',
  SWITCHYARD_PREFIX: path.join(dir, 'opt'),
  SWITCHYARD_ETC: path.join(dir, 'etc'),
  SWITCHYARD_BIN_DIR: path.join(dir, 'bin'),
  SWITCHYARD_SYSTEMD_DIR: path.join(dir, 'systemd'),
  SWITCHYARD_CONFIG: '',
  SWITCHYARD_NODE: process.execPath,
};

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The artifact `deploy/pack.sh` makes of this checkout, packed once for the file: a pack installs the
 * production dependencies, most of a test's time here. Every install below takes it, except the first,
 * which packs the checkout itself (`install.sh` with no artifact) to show that path.
 */
let packed: { status: number | null; stdout: string; stderr: string } = {
  status: null,
  stdout: '',
  stderr: '',
};
let artifact = '';
beforeAll(() => {
  packed = spawnSync('bash', [path.join(repo, 'deploy/pack.sh'), path.join(dir, 'out')], {
    env,
    encoding: 'utf8',
    timeout: 240_000,
  });
  artifact = packed.stdout.trim();
}, 300_000);
const TOKEN = '4242:staging-token-not-a-secret-0000000';

/** Like spawnSync, without blocking this process: the fake Telegram server answers from here. */
function run(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; input?: string },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env });
    const output = outputOf(child);
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout: output.out(), stderr: output.err() }));
    child.stdin.end(options.input ?? '');
  });
}

function install(...args: string[]) {
  const result = spawnSync('bash', [script, ...args], { env, encoding: 'utf8', timeout: 240_000 });
  expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** Every path under `root` (relative), not following symlinks. */
function walk(root: string, at = ''): string[] {
  return readdirSync(path.join(root, at), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(at, entry.name);
    return entry.isDirectory() && !entry.isSymbolicLink() ? [rel, ...walk(root, rel)] : [rel];
  });
}

const current = () => readlinkSync(path.join(dir, 'opt', 'current'));

it('installs only what runs, upgrades beside the previous release and rolls back', () => {
  // From the built checkout: install.sh packs it first.
  expect(install()).toContain('no artifact given: packing this checkout');
  const first = current();
  const release = path.join(dir, 'opt', first);
  const files = walk(release);
  const outsideModules = files.filter((f) => !f.startsWith('node_modules') && !f.includes('/node_modules'));
  expect(
    outsideModules.filter((f) => /(^|\/)(\.git|\.switchyard|test|tests|bench|coverage)$/.test(f)),
  ).toEqual([]);
  expect(outsideModules.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  expect(outsideModules).not.toContain('switchyard.yaml');
  expect(outsideModules).toContain(path.join('packages', 'cli', 'dist', 'main.js'));
  const installed = readdirSync(path.join(release, 'node_modules', '.pnpm'));
  for (const dev of ['@anthropic-ai+claude-code', 'playwright', 'vitest', '@biomejs', 'typescript']) {
    expect(
      installed.filter((name) => name.startsWith(dev)),
      dev,
    ).toEqual([]);
  }
  expect(installed.some((name) => name.startsWith('better-sqlite3@12.'))).toBe(true);

  const bin = path.join(dir, 'bin', 'switchyard');
  accessSync(bin, constants.X_OK);
  accessSync(path.join(release, 'packages', 'cli', 'dist', 'main.js'), constants.X_OK);
  const help = spawnSync(bin, ['help'], { env, encoding: 'utf8' });
  expect(help.status).toBe(0);
  expect(help.stdout).toContain('doctor [AGENT]');
  // The units run the current release.
  const unit = readFileSync(path.join(dir, 'systemd', 'switchyard-agent@.service'), 'utf8');
  expect(unit).toContain(
    `ExecStart=${process.execPath} ${path.join(dir, 'opt')}/current/packages/cli/dist/main.js bridge %i`,
  );
  expect(unit).toContain(
    `ExecStopPost=${process.execPath} ${path.join(dir, 'opt')}/current/packages/cli/dist/main.js unit-stopped %i`,
  );
  expect(unit).not.toContain('/usr/bin/env');
  if (existsSync('/usr/bin/systemd-analyze')) {
    // The units as installed (node by path) still pass systemd's checks, exposure no worse than shipped.
    const units = path.join(dir, 'units');
    mkdirSync(units);
    const instances = (['gateway', 'agent'] as const).map((name) => {
      const target = path.join(units, `switchyard-${name}@demo.service`);
      copyFileSync(path.join(dir, 'systemd', `switchyard-${name}@.service`), target);
      return target;
    });
    const verify = spawnSync('systemd-analyze', ['verify', ...instances], { encoding: 'utf8' });
    expect(
      verify.stderr.split('\n').filter((line) => line.includes(units) && !/Cannot add dependency/.test(line)),
    ).toEqual([]);
    expect(verify.status).toBe(0);
    const exposure = instances.map((file) => {
      const out = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', file], {
        encoding: 'utf8',
      }).stdout;
      return Number(/Overall exposure level for \S+: (\d+\.\d+)/.exec(out)?.[1]);
    });
    expect(exposure[0]).toBeLessThanOrEqual(1.3);
    expect(exposure[1]).toBeLessThanOrEqual(1.9);
  }
  expect(readFileSync(bin, 'utf8')).toContain(`exec "${process.execPath}" `);

  // The operator's config survives an upgrade.
  const config = path.join(dir, 'etc', 'switchyard.yaml');
  writeFileSync(config, '# mine\n');
  // The upgrade from an artifact given by its path, as an operator copies one to the host.
  expect(install(artifact)).not.toContain('packing this checkout');
  expect(readFileSync(config, 'utf8')).toBe('# mine\n');
  const second = current();
  expect(second).not.toBe(first);
  expect(existsSync(release)).toBe(true); // the previous release is kept
  expect(readdirSync(path.join(dir, 'opt', 'releases'))).toHaveLength(2);

  expect(install('--rollback')).toContain(`current is now ${path.basename(first)}`);
  expect(current()).toBe(first);
  expect(spawnSync(bin, ['help'], { env, encoding: 'utf8' }).status).toBe(0);
}, 300_000);

it('packs an artifact that installs with no checkout; add-agent takes an agent from nothing to doctor passing; uninstall removes it', async () => {
  const host = mkdtempSync(path.join(tmpdir(), 'sy-host-'));
  const telegram = createTelegramServer({ token: TOKEN, bot: { username: 'staging_bot' } });
  const { apiRoot } = await telegram.start();
  try {
    // The build machine packs (once for the file, above); the host gets only the tarball.
    expect(packed.status, packed.stderr).toBe(0);
    expect(path.basename(artifact)).toMatch(/^switchyard-0\.1\.0-\d{8}T\d{6}Z\.tar\.gz$/);
    expect(spawnSync('tar', ['-xzf', artifact, '-C', host]).status).toBe(0);
    const unpacked = path.join(host, path.basename(artifact, '.tar.gz'));
    expect(readFileSync(path.join(unpacked, 'RELEASE'), 'utf8')).toContain(
      `nodeAbi=${process.versions.modules}`,
    );

    const staging = {
      ...env,
      SWITCHYARD_PREFIX: path.join(host, 'opt'),
      SWITCHYARD_ETC: path.join(host, 'etc'),
      SWITCHYARD_BIN_DIR: path.join(host, 'bin'),
      SWITCHYARD_SYSTEMD_DIR: path.join(host, 'systemd'),
      // What the agent's claude would have: the pinned CLI, and a key instead of a login.
      PATH: `${path.join(repo, 'node_modules/.bin')}:${process.env.PATH}`,
      ANTHROPIC_API_KEY: 'sk-test',
    };
    const installed = spawnSync('bash', [path.join(unpacked, 'deploy/install.sh')], {
      env: staging,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(installed.status, `${installed.stdout}\n${installed.stderr}`).toBe(0);
    expect(installed.stdout).not.toContain('packing this checkout');
    const bin = path.join(host, 'bin', 'switchyard');
    const config = path.join(host, 'etc', 'switchyard.yaml');
    rmSync(config); // from nothing: no example agent either

    const addAgent = () =>
      run(
        bin,
        [
          'add-agent',
          'bot1',
          '--allow',
          '42',
          '--work-dir',
          path.join(host, 'srv/agents/bot1'),
          '--state-dir',
          path.join(host, 'var/lib/switchyard/bot1'),
          '--runtime-dir',
          path.join(host, 'run/bot1'),
          '--api-root',
          apiRoot,
        ],
        { env: staging, input: `${TOKEN}\n` },
      );
    const first = await addAgent();
    expect(first.status, `${first.stdout}\n${first.stderr}`).toBe(0);
    expect(first.stderr).toContain(`config: added agent "bot1" to ${config}`);
    expect(first.stderr).toContain('token: Telegram knows it as @staging_bot');
    expect(first.stdout).toContain('bot1: can start');
    const tokenFile = path.join(host, 'etc/credentials/bot1.token');
    expect(readFileSync(tokenFile, 'utf8')).toBe(`${TOKEN}\n`);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(tokenFile)).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(host, 'srv/agents/bot1')).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(host, 'var/lib/switchyard/bot1/bridge')).isDirectory()).toBe(true);

    // Idempotent: the second run keeps everything and asks for nothing.
    const configText = readFileSync(config, 'utf8');
    const second = await addAgent();
    expect(second.status, `${second.stdout}\n${second.stderr}`).toBe(0);
    expect(second.stderr).toContain('(kept as it is)');
    expect(second.stderr).toContain('bot1.token exists (kept)');
    expect(readFileSync(config, 'utf8')).toBe(configText);

    // The doctor as the gateway unit sees the token (systemd's LoadCredential= made by hand).
    const credentials = path.join(host, 'creds');
    mkdirSync(credentials);
    copyFileSync(tokenFile, path.join(credentials, 'telegram-token'));
    const doctor = await run(bin, ['doctor', 'bot1'], {
      env: { ...staging, CREDENTIALS_DIRECTORY: credentials },
    });
    expect(doctor.status, doctor.stdout).toBe(0);
    expect(doctor.stdout).toContain('the token is bot @staging_bot');
    expect(doctor.stdout).not.toContain('ERROR');

    const uninstall = path.join(host, 'opt/current/deploy/uninstall.sh');
    const removed = spawnSync('bash', [uninstall], { env: staging, encoding: 'utf8' });
    expect(removed.status, removed.stderr).toBe(0);
    expect(existsSync(path.join(host, 'opt'))).toBe(false);
    expect(existsSync(bin)).toBe(false);
    expect(readdirSync(path.join(host, 'systemd'))).toEqual([]);
    expect(existsSync(config)).toBe(true); // kept without --purge
    expect(removed.stdout).toContain(path.join(host, 'srv/agents/bot1'));
    const purged = spawnSync('bash', [path.join(unpacked, 'deploy/uninstall.sh'), '--purge'], {
      env: staging,
      encoding: 'utf8',
    });
    expect(purged.status, purged.stderr).toBe(0);
    expect(existsSync(path.join(host, 'etc'))).toBe(false);
    expect(existsSync(path.join(host, 'srv/agents/bot1'))).toBe(true); // the agent's work is never removed
  } finally {
    await telegram.stop();
    rmSync(host, { recursive: true, force: true });
  }
}, 300_000);

/** Root here, and allowed a private mount namespace: the system install can run in a container-like root. */
const canContain =
  process.getuid?.() === 0 && spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0;

it.skipIf(!canContain)(
  'a system install in a container-like root (private /etc and /var/lib): add-agent creates sy-NAME, its directories and token, and doctor passes as that user',
  async () => {
    const host = mkdtempSync(path.join(tmpdir(), 'sy-root-'));
    chmodSync(host, 0o755); // the agent's user reads the release under it
    const telegram = createTelegramServer({ token: TOKEN, bot: { username: 'system_bot' } });
    const { apiRoot } = await telegram.start();
    try {
      mkdirSync(path.join(host, 'fake-bin'));
      // No systemd in here: a systemctl that accepts daemon-reload and says units are disabled.
      writeFileSync(
        path.join(host, 'fake-bin', 'systemctl'),
        '#!/bin/sh\n[ "$1" = is-enabled ] && echo disabled\nexit 0\n',
        { mode: 0o755 },
      );
      // Inside one private mount namespace: /etc is a copy (useradd edits the copy), /var/lib an empty
      // directory; everything else the install writes goes under $host by the usual variables.
      const script = `set -euo pipefail
mkdir -p "$H/etc" "$H/var-lib"
cp -a /etc/. "$H/etc/"
mount --bind "$H/etc" /etc
mount --bind "$H/var-lib" /var/lib
# doctor, run as sy-bot1, finds claude on PATH in the checkout: shown here, where that user can reach it
# (the checkout may sit in a directory only its owner may enter).
mkdir -p "$H/checkout"
mount --bind "$REPO" "$H/checkout"
bash "$REPO/deploy/install.sh" "$ARTIFACT"
add() {
  printf '%s\\n' "$TOKEN" | "$H/bin/switchyard" add-agent bot1 --allow 42 --work-dir "$H/srv/bot1" --api-root "$API"
}
echo "=== first"; add
echo "=== second"; add
echo "=== reinstall"; bash "$REPO/deploy/install.sh" "$ARTIFACT"
echo "=== facts"
getent passwd sy-bot1 | cut -d: -f1,6,7
stat -c '%n %U:%G %a' /var/lib/switchyard /var/lib/switchyard/bot1/bridge "$H/srv/bot1" /etc/switchyard/credentials /etc/switchyard/credentials/bot1.token /etc/switchyard/switchyard.yaml
runuser -u sy-bot1 -- cat /etc/switchyard/credentials/bot1.token 2>/dev/null && echo "TOKEN READABLE BY THE AGENT" || echo "token unreadable by sy-bot1"
`;
      const result = await run('unshare', ['-m', '--propagation', 'private', 'bash', '-c', script], {
        env: {
          ...process.env,
          H: host,
          REPO: repo,
          ARTIFACT: artifact,
          TOKEN,
          API: apiRoot,
          PATH: `${path.join(host, 'fake-bin')}:${path.join(host, 'checkout/node_modules/.bin')}:${process.env.PATH}`,
          SWITCHYARD_PREFIX: path.join(host, 'opt'),
          SWITCHYARD_BIN_DIR: path.join(host, 'bin'),
          SWITCHYARD_SYSTEMD_DIR: path.join(host, 'systemd'),
          SWITCHYARD_NODE: process.execPath,
          SWITCHYARD_CONFIG: '',
          ANTHROPIC_API_KEY: 'sk-test',
        },
      });
      const out = `${result.stdout}\n${result.stderr}`;
      expect(result.status, out).toBe(0);
      const [first = '', second = '', reinstall = '', facts = ''] = result.stdout
        .split(/^=== \w+$/m)
        .slice(1);
      expect(result.stderr).toContain('user: created sy-bot1 (home /var/lib/switchyard/bot1/bridge)');
      expect(result.stderr).toContain('token: Telegram knows it as @system_bot');
      expect(result.stderr).toContain('doctor: as sy-bot1: switchyard doctor bot1');
      expect(first).toContain('bot1: can start');
      expect(first).toMatch(/ok {4}agents\[\d\]\.claude\.env: claude authenticates with ANTHROPIC_API_KEY/);
      expect(first).toMatch(/ok {4}agents\[\d\]\.stateDir: \/var\/lib\/switchyard\/bot1\/bridge is writable/);
      expect(second).toContain('bot1: can start');
      expect(result.stderr).toContain('user: sy-bot1 exists');
      expect(reinstall).toContain('bot1: can start'); // install.sh's doctor, as sy-bot1
      expect(facts).toContain('sy-bot1:/var/lib/switchyard/bot1/bridge:/usr/sbin/nologin');
      expect(facts).toContain('/var/lib/switchyard root:root 755');
      expect(facts).toContain('/var/lib/switchyard/bot1/bridge sy-bot1:sy-bot1 700');
      expect(facts).toContain(`${path.join(host, 'srv/bot1')} sy-bot1:sy-bot1 700`);
      expect(facts).toContain('/etc/switchyard/credentials root:root 700');
      expect(facts).toContain('/etc/switchyard/credentials/bot1.token root:root 600');
      expect(facts).toContain('/etc/switchyard/switchyard.yaml root:switchyard 640');
      expect(facts).toContain('token unreadable by sy-bot1');
      // Nothing leaked out of the namespace.
      expect(spawnSync('getent', ['passwd', 'sy-bot1']).status).not.toBe(0);
    } finally {
      await telegram.stop();
      rmSync(host, { recursive: true, force: true });
    }
  },
  300_000,
);
