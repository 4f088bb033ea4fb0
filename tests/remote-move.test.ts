/**
 * Moving an agent's bridge from one worker host to another, as deploy/README.md ("Moving a bridge to
 * another host") says to, through a real sshd: the old bridge stopped (its Claude ended, as
 * `systemctl stop` does), a message sent meanwhile kept by the gateway, the bridge's state directory
 * copied to the new worker, the config pointed there and the link restarted, the new bridge started.
 * The message is answered once, on the new host, in the same conversation (`--resume` of the session
 * the copy carried), and nothing said before is said again.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { remoteOf, startAndAsk } from './remote-system.js';
import { sshdAvailable, sshdPerFile } from './sshd.js';
import { botMessages, systemPerTest } from './system.js';

const describeSsh = sshdAvailable || process.env.CI ? describe : describe.skip;

type Entry = { stateDir: string; runtimeDir: string; bridge: { socket: string } };

/** Rewrites the one agent entry of a JSON config. */
function editEntry(file: string, edit: (entry: Entry) => void): void {
  const config = JSON.parse(readFileSync(file, 'utf8')) as { agents: Entry[] };
  edit(config.agents[0] as Entry);
  writeFileSync(file, JSON.stringify(config));
}

describeSsh('moving a bridge to another host', () => {
  const server = sshdPerFile();
  const startSystem = systemPerTest();

  it('loses no message: kept by the gateway while no bridge runs, answered once on the new host in the same session', async () => {
    const sshd = server.sshd();
    const system = await startSystem({
      rules: [
        rule('hello', say('Hello from the old host.')),
        rule('moved', say('Answered on the new host.')),
      ],
      remote: remoteOf(sshd),
    });
    const { telegram, chatId } = system;
    await startAndAsk(system, 'hello', 'Hello from the old host.');

    // 1. The old worker: the bridge stopped, and its Claude with it (what `systemctl stop` does).
    await system.kill('bridge', 'SIGTERM');
    const stopped = await system.stopClaude();
    expect(stopped.status, stopped.stderr).toBe(0);
    // 2. A message while no bridge runs: the gateway keeps it.
    telegram.sendText(chatId, 'moved yet?');
    // 3. The bridge's state directory to the new worker (here another directory; there, tar over ssh).
    const oldState = path.join(system.dir, 'worker', 'state');
    const newState = path.join(system.dir, 'new-worker', 'state');
    // As deploy/README.md writes it: tar keeps modes and the stdin FIFOs (the bridge checks its FIFO's kind).
    mkdirSync(newState, { recursive: true });
    const copied = spawnSync('sh', ['-c', `tar -C '${oldState}' -cf - . | tar -C '${newState}' -xpf -`], {
      encoding: 'utf8',
    });
    expect(copied.status, copied.stderr).toBe(0);
    const newSocket = path.join(newState, 'bridge', 'link.sock');
    // 4. Both configs name the new worker; the link restarted dials it.
    editEntry(system.workerConfigPath, (entry) => {
      entry.stateDir = newState;
      entry.runtimeDir = path.join(system.dir, 'new-worker', 'run');
      entry.bridge.socket = newSocket;
    });
    editEntry(system.configPath, (entry) => {
      entry.bridge.socket = newSocket;
    });
    await system.kill('link', 'SIGTERM');
    system.start('link');
    // 5. The new worker's bridge.
    system.start('bridge');
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === 'Answered on the new host.'),
      {
        timeoutMs: 90_000,
      },
    );
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    expect(texts).toEqual(['Hello from the old host.', 'Answered on the new host.']);
    // The same conversation: the new host's Claude resumed the session the copy carried.
    const claude = system.claudePid(chatId);
    expect(claude).toBeDefined();
    const argv = readFileSync(`/proc/${claude}/cmdline`, 'utf8').split('\0');
    expect(argv).toContain('--resume');
    expect(readFileSync(`/proc/${claude}/cmdline`, 'utf8')).not.toContain(oldState);
    const asked = system.model.messageRequests().map((r) => r.view?.userText ?? '');
    expect(asked.filter((t) => t.includes('moved yet?'))).toHaveLength(1);
  });
});
