/**
 * `switchyard run AGENT`, the development supervisor: both services as child processes, `/restart`
 * from Telegram restarts only the bridge (the claude process is adopted, not replaced), and Ctrl-C
 * stops everything including claude.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { readStartTime, recordedProcesses } from '@switchyard/agent-bridge';
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { liveProcesses } from './processes.js';
import { botMessages, MAIN, systemPerTest } from './system.js';

/** Running, not merely a zombie waiting to be reaped (this machine's init may be slow to reap orphans). */
function alive(pid: number): boolean {
  const found = readStartTime(pid);
  return found.ok && !found.zombie;
}

/** The pid of `parent`'s child whose command line contains `needle`. */
function childOf(parent: number, needle: string): number | undefined {
  return liveProcesses().find((p) => p.ppid === parent && p.command.includes(needle))?.pid;
}

describe('end to end: switchyard run', () => {
  const startSystem = systemPerTest();

  it('restarts only the bridge on /restart and when it crashes, keeps the claude process, and stops everything on SIGINT', async () => {
    const system = await startSystem({
      rules: [
        rule('first', say('First answer.')),
        rule('second', say('Second answer.')),
        rule('third', say('Third answer.')),
      ],
    });
    const { telegram, chatId } = system;
    let output = '';
    const run = spawn(process.execPath, [MAIN, '--config', system.configPath, 'run', 'e2e'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
    try {
      telegram.sendText(chatId, 'first');
      await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'First answer.'), {
        timeoutMs: 60_000,
      });
      const claudePid = recordedProcesses(path.join(system.dir, 'state', 'bridge'))[0]?.record.pid as number;

      telegram.sendText(chatId, '/restart');
      const deadline = Date.now() + 10_000;
      while (!output.includes('restarting the bridge on request')) {
        if (Date.now() > deadline) throw new Error(`no bridge restart seen:\n${output.slice(-5_000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      telegram.sendText(chatId, 'second');
      await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Second answer.'), {
        timeoutMs: 60_000,
      });
      expect(recordedProcesses(path.join(system.dir, 'state', 'bridge'))[0]?.record.pid).toBe(claudePid);
      expect(alive(claudePid)).toBe(true);

      // A bridge that crashes is restarted by the supervisor, and adopts the same claude again.
      const bridgePid = childOf(run.pid ?? 0, ' bridge e2e');
      expect(bridgePid).toBeDefined();
      process.kill(bridgePid ?? 0, 'SIGKILL');
      telegram.sendText(chatId, 'third');
      await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Third answer.'), {
        timeoutMs: 60_000,
      });
      expect(childOf(run.pid ?? 0, ' bridge e2e')).not.toBe(bridgePid);
      expect(recordedProcesses(path.join(system.dir, 'state', 'bridge'))[0]?.record.pid).toBe(claudePid);

      run.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(alive(claudePid), `claude stopped with the supervisor:\n${output.slice(-3_000)}`).toBe(false);
    } finally {
      if (run.exitCode === null) run.kill('SIGKILL');
      if (!run.killed && run.exitCode === null) console.log(output.slice(-10_000));
    }
  });
});
