/**
 * A new process's stdout log is its own. The soak lost 17 messages of one conversation: a process stopped
 * to free a slot (or anything it started, which inherits its stdout) still wrote a line after the
 * conversation's next process had truncated `stdout.log`. That write landed at the old process's own file
 * offset, past the new one's output, so the file read as a line of 257,527 bytes (zeros, then the old
 * line) that no JSON parser takes; the new process's first lines were lost in it and its turn never ended.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STDOUT_LOG, spawnChild } from '../../packages/agent-bridge/src/io/process/child.js';
import { spawnedChildren } from './spawned.js';

const { handles, tempDir } = spawnedChildren();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stdout log per process', () => {
  it('a line an earlier process writes after the next one started never reaches the new log', async () => {
    const dir = tempDir('sy-stdout-');
    const start = (script: string) => {
      const { handle } = spawnChild({
        stateDir: dir,
        workDir: dir,
        bin: '/bin/sh',
        args: ['-c', script],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      });
      handles.push(handle);
      return handle;
    };
    // The earlier process: 100 KB of output, then, after the next one has started, one line more.
    start(`head -c 100000 /dev/zero | tr '\\0' a; echo; sleep 1; echo '{"type":"late"}'; sleep 30`);
    await sleep(300);
    start(`echo '{"type":"new"}'; sleep 30`);
    await sleep(1_500);
    const log = readFileSync(join(dir, STDOUT_LOG), 'utf8');
    expect(log).toBe('{"type":"new"}\n');
  });
});
