/**
 * `switchyard version` (also `--version`): what is installed, for a bug report or before an upgrade.
 * The cli package's version; in an installed release (deploy/pack.sh writes `RELEASE` at its root) the
 * release's name, commit and the Node it was packed for; in a checkout, its git commit when git can
 * tell; and the Node running now.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `version` reports; `release` only in an installed release, `commit` whenever known. */
export interface VersionInfo {
  version: string;
  release?: string;
  commit?: string;
  /** The Node the release was packed with (its native modules are that ABI's). */
  packedNode?: string;
  node: string;
}

/** The root of the checkout or release this code runs from (`packages/cli/dist/..` up three). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Reads the version facts of the tree at `root` (default: the one this code is in); `git: false` leaves a
 * checkout's commit out rather than run git (a service's start).
 */
export function versionInfo(root = ROOT, options: { git?: boolean } = {}): VersionInfo {
  const pkg = JSON.parse(readFileSync(path.join(root, 'packages/cli/package.json'), 'utf8')) as {
    version: string;
  };
  const info: VersionInfo = { version: pkg.version, node: process.versions.node };
  const release = readRelease(root);
  if (release) {
    if (release.name) info.release = release.name;
    if (release.commit) info.commit = release.commit;
    if (release.node) info.packedNode = release.node;
    return info;
  }
  if (options.git === false) return info;
  try {
    const commit = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    }).trim();
    if (commit) info.commit = commit;
  } catch {
    // Not a git checkout, or no git: the version alone.
  }
  return info;
}

/** The `key=value` lines of `RELEASE`, or undefined outside an installed release. */
function readRelease(root: string): Record<string, string> | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(root, 'RELEASE'), 'utf8');
  } catch {
    return undefined;
  }
  const entries = text
    .split('\n')
    .map((line) => /^([^=]+)=(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1] ?? '', m[2] ?? ''] as const);
  return Object.fromEntries(entries);
}

/** The lines `switchyard version` prints. */
export function formatVersion(info: VersionInfo): string[] {
  const lines = [`switchyard ${info.version}${info.commit ? ` (${info.commit})` : ''}`];
  if (info.release) {
    lines.push(`release ${info.release}${info.packedNode ? `, packed with Node ${info.packedNode}` : ''}`);
  }
  lines.push(`node ${info.node}`);
  return lines;
}
