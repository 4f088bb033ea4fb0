/**
 * The bridge's state holds the conversation (Claude's output, the outbox, the stdin fifo): under umask
 * 0000 every file it creates is still 0600, so no other user reads a turn from the state directory.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../packages/agent-bridge/src/io/outbox/atomic-file.js';
import { spawnChild } from '../../packages/agent-bridge/src/io/process/child.js';

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

describe('bridge state file modes', () => {
  let previous: number;
  let dir: string;
  beforeEach(() => {
    previous = process.umask(0o000);
    dir = mkdtempSync(path.join(tmpdir(), 'sy-bridge-modes-'));
  });
  afterEach(() => {
    process.umask(previous);
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the fifo, the stdout and stderr logs and snapshot files 0600 under umask 0000', async () => {
    const stateDir = path.join(dir, 'bridge');
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const { handle, process: child } = spawnChild({
      stateDir,
      workDir: dir,
      bin: 'true',
      args: [],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    await new Promise((resolve) => child.once('exit', resolve));
    handle.detach();
    writeFileAtomic(path.join(stateDir, 'bridge.json'), '{}');
    expect(mode(stateDir)).toBe('700');
    const files = readdirSync(stateDir);
    expect(files).toEqual(expect.arrayContaining(['stdin.fifo', 'stdout.log', 'stderr.log', 'bridge.json']));
    for (const file of files) expect(mode(path.join(stateDir, file)), file).toBe('600');
  });
});
