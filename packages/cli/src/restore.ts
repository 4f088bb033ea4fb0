/**
 * `switchyard restore AGENT SRC`: puts a backup made by `switchyard backup` (backup.ts) back as the
 * agent's state directory, on this host or another with the same config. It replaces what operators
 * did by hand (stop-claude, rsync, two chowns), in the one order that is safe:
 *
 * 1. SRC must be a backup of this agent (its `manifest.json` names it), and the agent must be stopped:
 *    a running gateway would keep writing the SQLite file being replaced.
 * 2. The agent's Claude processes are ended: the restored records name the processes of the backup's
 *    time, and a Claude left running on the replaced state would be nobody's.
 * 3. The current state directory, if any, is moved aside (`<stateDir>.before-restore-<time>`), never
 *    deleted; the backup's files are copied in with their modes, and every directory made 0700.
 * 4. Under the units (running as root, the agent's user `sy-NAME` there) ownership is as the units
 *    expect: `gateway/` and `files/` the gateway's user `switchyard` with the agent's group, `bridge/`
 *    (the agent user's home, with its Claude login and sessions) `sy-NAME`.
 *
 * A backup holds the agent's Claude login (`bridge/.claude/.credentials.json`, the home of the agent
 * user under the units) and its conversations: {@link backupHoldsLogin} lets `backup` say so.
 */
import {
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
} from 'node:fs';
import path from 'node:path';
import type { Logger } from '@switchyard/protocol';
import type { AgentConfig } from './agent-config.js';
import type { BackupManifest } from './backup.js';
import { findServiceProcesses } from './host-probe.js';
import { OperateError } from './operate-error.js';
import { stopClaude } from './services.js';

/** Where a backup keeps the agent's Claude login, relative to its root. */
export const LOGIN_IN_BACKUP = path.join('bridge', '.claude', '.credentials.json');

/** Whether a backup's files include the agent's Claude login. */
export function backupHoldsLogin(manifest: Pick<BackupManifest, 'files'>): boolean {
  return manifest.files.includes(LOGIN_IN_BACKUP);
}

/** Who owns what after a restore under the units; undefined outside them (one user runs everything). */
export interface RestoreOwners {
  gateway: { uid: number; gid: number };
  bridge: { uid: number; gid: number };
}

/** What {@link restoreAgent} needs besides the agent and the backup. */
export interface RestoreOptions {
  agent: AgentConfig;
  /** The backup's directory (what `backup` wrote). */
  source: string;
  configFile: string;
  logger: Logger;
  owners: RestoreOwners | undefined;
  /** For the name of the moved-aside directory. */
  now?: Date;
}

/** What a restore did. */
export interface RestoreReport {
  files: number;
  /** Where the state that was there before went; undefined when there was none. */
  movedAside: string | undefined;
  holdsLogin: boolean;
}

/** Restores `source` as the agent's state directory; throws {@link OperateError} saying what to do. */
export async function restoreAgent(options: RestoreOptions): Promise<RestoreReport> {
  const { agent, source } = options;
  const manifest = readManifest(source);
  if (manifest.agent !== agent.name) {
    throw new OperateError(
      `${source} is a backup of agent "${manifest.agent}", not "${agent.name}": restore it with switchyard restore ${manifest.agent} ${source}`,
    );
  }
  const running = (['gateway', 'bridge'] as const).filter(
    (service) => findServiceProcesses(service, agent.name, options.configFile).length > 0,
  );
  if (running.length > 0) {
    throw new OperateError(
      `agent "${agent.name}" is running (its ${running.join(' and ')}): stop it first (systemctl stop switchyard-gateway@${agent.name} switchyard-agent@${agent.name}, or Ctrl-C its switchyard run); nothing was changed`,
    );
  }
  const missing = manifest.files.filter((file) => !existsSync(path.join(source, file)));
  if (missing.length > 0) {
    throw new OperateError(
      `${source} lacks ${missing.length} file(s) its manifest lists (${missing.slice(0, 3).join(', ')}): it is incomplete; nothing was changed`,
    );
  }
  if (existsSync(agent.stateDir)) await stopClaude(agent, options.logger);

  let movedAside: string | undefined;
  if (existsSync(agent.stateDir) && readdirSync(agent.stateDir).length > 0) {
    const stamp = (options.now ?? new Date()).toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
    movedAside = `${agent.stateDir}.before-restore-${stamp}`;
    renameSync(agent.stateDir, movedAside);
  }
  // The state directory itself stays reachable (0755, as systemd makes it): each service's own is 0700.
  mkdirSync(agent.stateDir, { recursive: true, mode: 0o755 });
  for (const file of manifest.files) {
    const target = path.join(agent.stateDir, file);
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    copyFileSync(path.join(source, file), target);
  }
  if (options.owners) {
    const { gateway, bridge } = options.owners;
    for (const [dir, owner] of [
      ['gateway', gateway],
      ['files', gateway],
      ['bridge', bridge],
    ] as const) {
      chownTree(path.join(agent.stateDir, dir), owner.uid, owner.gid);
    }
  }
  return { files: manifest.files.length, movedAside, holdsLogin: backupHoldsLogin(manifest) };
}

function readManifest(source: string): BackupManifest {
  let text: string;
  try {
    text = readFileSync(path.join(source, 'manifest.json'), 'utf8');
  } catch (err) {
    throw new OperateError(
      `${source} is not a backup (no manifest.json: ${(err as NodeJS.ErrnoException).code ?? err}): name a directory \`switchyard backup\` wrote`,
    );
  }
  const manifest = JSON.parse(text) as Partial<BackupManifest>;
  if (typeof manifest.agent !== 'string' || !Array.isArray(manifest.files)) {
    throw new OperateError(`${source}/manifest.json is not a backup's manifest (no agent or files)`);
  }
  // Paths stay inside the backup and the state directory: a manifest naming ../ is refused.
  const outside = manifest.files.find(
    (f) => typeof f !== 'string' || path.isAbsolute(f) || f.split('/').includes('..'),
  );
  if (outside !== undefined)
    throw new OperateError(`${source}/manifest.json names a path outside it: ${outside}`);
  return manifest as BackupManifest;
}

/** `chown -R uid:gid dir` (a missing directory is skipped: that service kept nothing). */
function chownTree(dir: string, uid: number, gid: number): void {
  if (!existsSync(dir)) return;
  chownSync(dir, uid, gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(child, uid, gid);
    else chownSync(child, uid, gid);
  }
}
