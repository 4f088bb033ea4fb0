/**
 * A bridge killed between starting a process and recording it leaves that process reading the
 * conversation's fifo; a new process started there must not share it (the soak saw two CLIs answer one
 * chat, each reading half of what it was sent): `spawnChild` ends whatever reads the fifo first.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnChild } from '../../packages/agent-bridge/src/io/process/child.js';
import { spawnedChildren } from './spawned.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return !/^[^)]*\)\s+Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

const { handles, tempDir } = spawnedChildren();

describe('orphans on a conversation’s fifo', () => {
  it('a process left reading the fifo is ended before the next one starts there, and named', async () => {
    const dir = tempDir('sy-orphan-');
    const stand = (out: string) => ({
      stateDir: dir,
      workDir: dir,
      bin: '/bin/sh',
      args: ['-c', `cat > ${join(dir, out)}`],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    // The first process, as a killed bridge would leave it: running, and nobody holds its record.
    const first = spawnChild(stand('first.txt'));
    handles.push(first.handle);
    const orphan = first.process.pid as number;
    expect(first.orphans).toEqual([]);
    expect(alive(orphan)).toBe(true);
    const second = spawnChild(stand('second.txt'));
    handles.push(second.handle);
    expect(second.orphans).toContain(orphan);
    const deadline = Date.now() + 5_000;
    while (alive(orphan) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(orphan)).toBe(false);
    // Everything written now reaches the one process left.
    second.handle.writeLine('for the new one');
    let text = '';
    for (const until = Date.now() + 5_000; !text.includes('for the new one') && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      try {
        text = readFileSync(join(dir, 'second.txt'), 'utf8');
      } catch {
        // not yet
      }
    }
    expect(text).toBe('for the new one\n');
  });
});
