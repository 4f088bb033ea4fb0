/**
 * `switchyard backup AGENT DEST`: a copy of an agent's durable state that can be restored on this host
 * or another (see deploy/README.md, "Backup and restore"). The gateway's SQLite goes through SQLite's
 * online backup, so it is consistent while the gateway writes; everything else in the state directory
 * (the gateway's saved attachments, the bridge's `bridge.json` records, outbox and logs) is copied file
 * by file. The bridge replaces each of its files atomically, so each copied file is whole; for a copy
 * of the bridge's files at one instant, stop the agent unit first (its Claude processes keep running).
 *
 * The database copy is 0600 (owner only) under any umask; other files keep their modes, which a restore
 * with `rsync -a` relies on. FIFOs and sockets are skipped (the bridge recreates its stdin FIFO). DEST must
 * not exist yet, or be empty: a backup never overwrites an earlier one.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { backupGatewayStore } from '@switchyard/gateway';
import { STATE_LOCK_FILE } from '@switchyard/protocol';
import type { AgentConfig } from './agent-config.js';

/** What a backup holds; also written to `DEST/manifest.json`. */
export interface BackupManifest {
  agent: string;
  createdAt: string;
  /** The state directory it was taken from. */
  source: string;
  /** Paths relative to DEST. */
  files: string[];
}

/** Where the gateway keeps its SQLite file inside its state directory. */
const STORE = 'gateway.sqlite';

/** Copies `agent`'s state directory to `dest` (created); resolves with the manifest. */
export async function backupAgent(
  agent: Pick<AgentConfig, 'name' | 'stateDir'>,
  dest: string,
  now = new Date(),
): Promise<BackupManifest> {
  let existing: string[] = [];
  try {
    existing = readdirSync(dest);
  } catch {
    // absent: created below
  }
  if (existing.length > 0) throw new Error(`${dest} is not empty: back up into a new directory`);
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  const files: string[] = [];
  const copyTree = (from: string, to: string, skip: (name: string, at: string) => boolean) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(from, { withFileTypes: true });
    } catch {
      return;
    }
    mkdirSync(to, { recursive: true, mode: 0o700 });
    for (const entry of entries) {
      if (skip(entry.name, from)) continue;
      const source = path.join(from, entry.name);
      const target = path.join(to, entry.name);
      if (entry.isDirectory()) copyTree(source, target, skip);
      else if (entry.isFile()) {
        copyFileSync(source, target);
        files.push(path.relative(dest, target));
      }
    }
  };
  const gatewayDir = path.join(agent.stateDir, 'gateway');
  // The store and its WAL are taken by the online backup, never as files.
  // A lock names a process of this host: a restored copy must not carry it.
  copyTree(
    agent.stateDir,
    dest,
    (name, at) => name === STATE_LOCK_FILE || (at === gatewayDir && name.startsWith(STORE)),
  );
  const store = path.join(gatewayDir, STORE);
  if (existsSync(store)) {
    const target = path.join(dest, 'gateway', STORE);
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    // The copy holds every chat's messages: owner-only from its first byte, whatever the umask (an
    // empty file is an empty database, which the online backup fills).
    writeFileSync(target, '', { mode: 0o600 });
    await backupGatewayStore(store, target);
    chmodSync(target, 0o600);
    files.push(path.relative(dest, target));
  }
  const manifest: BackupManifest = {
    agent: agent.name,
    createdAt: now.toISOString(),
    source: agent.stateDir,
    files: files.sort(),
  };
  writeFileSync(path.join(dest, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return manifest;
}
