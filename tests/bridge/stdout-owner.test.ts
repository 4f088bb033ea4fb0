/**
 * A new process's stdout log is its own. The soak lost 17 messages of one conversation: a process stopped
 * to free a slot (or anything it started, which inherits its stdout) still wrote a line after the
 * conversation's next process had truncated `stdout.log`. That write landed at the old process's own file
 * offset, past the new one's output, so the file read as a line of 257,527 bytes (zeros, then the old
 * line) that no JSON parser takes; the new process's first lines were lost in it and its turn never ended.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ChildHandle,
  STDOUT_LOG,
  spawnChild,
} from '../../packages/agent-bridge/src/io/process/child.js';

let dir: string | undefined;
const handles: ChildHandle[] = [];
afterEach(async () => {
  for (const handle of handles.splice(0)) {
    await handle.terminate(500);
    handle.detach();
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stdout log per process', () => {
  it('a line an earlier process writes after the next one started never reaches the new log', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-stdout-'));
    const start = (script: string) => {
      const { handle } = spawnChild({
        stateDir: dir as string,
        workDir: dir as string,
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
