/**
 * `deploy/install.sh` as far as it can run without root: a staging install (`SWITCHYARD_NO_SYSTEM=1`)
 * into a temporary prefix. It must install only what runs (no .git, sources, tests, dev dependencies or
 * local state), leave an executable `switchyard` that works, keep the previous release on an upgrade,
 * never overwrite the operator's config, and roll back to the previous release.
 */
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../deploy/install.sh');
const dir = mkdtempSync(path.join(tmpdir(), 'sy-install-'));
const env = {
  ...process.env,
  SWITCHYARD_NO_SYSTEM: '1',
  SWITCHYARD_PREFIX: path.join(dir, 'opt'),
  SWITCHYARD_ETC: path.join(dir, 'etc'),
  SWITCHYARD_BIN_DIR: path.join(dir, 'bin'),
  SWITCHYARD_SYSTEMD_DIR: path.join(dir, 'systemd'),
  SWITCHYARD_CONFIG: '',
};

afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
  install();
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
    `ExecStart=/usr/bin/env node ${path.join(dir, 'opt')}/current/packages/cli/dist/main.js bridge %i`,
  );

  // The operator's config survives an upgrade.
  const config = path.join(dir, 'etc', 'switchyard.yaml');
  writeFileSync(config, '# mine\n');
  install();
  expect(readFileSync(config, 'utf8')).toBe('# mine\n');
  const second = current();
  expect(second).not.toBe(first);
  expect(existsSync(release)).toBe(true); // the previous release is kept
  expect(readdirSync(path.join(dir, 'opt', 'releases'))).toHaveLength(2);

  expect(install('--rollback')).toContain(`current is now ${path.basename(first)}`);
  expect(current()).toBe(first);
  expect(spawnSync(bin, ['help'], { env, encoding: 'utf8' }).status).toBe(0);
}, 300_000);
