/**
 * An agent's bridge on another host (issue 29), end to end through a real OpenSSH server: the gateway
 * and its link (`switchyard link`, an `ssh -N -R` client) on one side, the bridge with its own config,
 * state and exchange directories on the other, the worker's socket served by sshd. The two "hosts" are
 * this machine; only the ssh link joins them. What a local agent promises holds through the link: the
 * answer once and whole when the link is killed mid-stream, a message sent meanwhile delivered, and the
 * worker's bridge killed and restarted adopting the `claude` that kept running.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { liveProcesses } from './processes.js';
import { remoteOf } from './remote-system.js';
import { descendants, sshdAvailable, sshdPerFile } from './sshd.js';
import { botMessages, type System, systemPerTest } from './system.js';

const LONG_ANSWER = Array.from(
  { length: 40 },
  (_, i) => `Line ${i + 1} of a long answer, streamed slowly.`,
).join('\n');

const describeSsh = sshdAvailable || process.env.CI ? describe : describe.skip;

/** The ssh client the link runs, if one runs now. */
function sshClientOf(system: System): number | undefined {
  const link = system.pid('link');
  if (link === undefined) return undefined;
  const children = new Set(descendants(link));
  return liveProcesses().find((p) => children.has(p.pid) && p.command.startsWith('ssh '))?.pid;
}

/** Every file under `dir` whose bytes contain `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const name of readdirSync(at)) {
      const file = path.join(at, name);
      const stat = statSync(file, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(file);
      else if (stat?.isFile() && readFileSync(file).includes(needle)) found.push(file);
    }
  };
  walk(dir);
  return found;
}

describeSsh('end to end: the bridge on another host, through a real sshd', () => {
  // Nothing this file started may outlive it: no sshd, no ssh client, no session of either (sshdPerFile).
  const sshd = sshdPerFile();
  const startSystem = systemPerTest();
  const start = (rules: Parameters<typeof startSystem>[0]['rules']) =>
    startSystem({ rules, remote: remoteOf(sshd.sshd()) });

  /** Starts the gateway, the link and the bridge, asks for the long answer, and waits until it streams. */
  const startStreaming = async (system: System): Promise<void> => {
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('link');
    system.start('bridge');
    telegram.sendText(chatId, 'long please');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text.includes('Line 3')), {
      timeoutMs: 60_000,
    });
  };

  it('answers a conversation through the remote bridge, and the worker side holds no secret of the gateway', async () => {
    const system = await start([rule('hello', say('Hello from the worker host.'))]);
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('link');
    system.start('bridge');
    telegram.sendText(chatId, 'hello');
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === 'Hello from the worker host.'),
      { timeoutMs: 60_000 },
    );
    expect(botMessages(telegram, chatId).map((m) => m.text)).toEqual(['Hello from the worker host.']);
    // The bridge reached the gateway through ssh: the link's client runs, and the worker's socket is sshd's.
    expect(sshClientOf(system)).toBeDefined();
    expect(statSync(path.join(system.dir, 'worker', 'state', 'bridge', 'link.sock')).isSocket()).toBe(true);
    // No bot token on the worker's side: not in its files, not in the bridge's environment.
    expect(filesHolding(path.join(system.dir, 'worker'), system.token)).toEqual([]);
    const bridgePid = system.pid('bridge');
    expect(readFileSync(`/proc/${bridgePid}/environ`).includes(system.token)).toBe(false);
  });

  it('survives the ssh link killed mid-stream: the answer once and whole, a message sent meanwhile delivered', async () => {
    const system = await start([
      rule('long', say(LONG_ANSWER, { chunkSize: 12, chunkDelayMs: 40 })),
      rule('after', say('Got your second message.')),
    ]);
    const { telegram, chatId } = system;
    await startStreaming(system);
    const first = sshClientOf(system);
    expect(first).toBeDefined();
    process.kill(first as number, 'SIGKILL');
    telegram.sendText(chatId, 'after the cut');
    const second = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === 'Got your second message.'),
      { timeoutMs: 90_000 },
    );
    expect(second).toBeDefined();
    // The link came back as another ssh client.
    expect(sshClientOf(system)).not.toBe(first);
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    expect(texts.filter((t) => t.includes('Line 40 of a long answer'))).toHaveLength(1);
    expect(texts.filter((t) => t.includes('Line 1 of a long answer'))).toHaveLength(1);
    const answer = texts.find((t) => t.includes('Line 1 of a long answer')) ?? '';
    expect(answer.replace(/\s+/g, ' ')).toContain(LONG_ANSWER.replace(/\s+/g, ' '));
    expect(texts.filter((t) => t === 'Got your second message.')).toHaveLength(1);
    const userTexts = system.model.messageRequests().map((r) => r.view?.userText ?? '');
    expect(new Set(userTexts.filter((t) => t.includes('long please'))).size).toBeLessThanOrEqual(1);
  });

  it("survives the worker's bridge killed and restarted mid-stream: the running claude adopted, the answer once", async () => {
    const system = await start([rule('long', say(LONG_ANSWER, { chunkSize: 12, chunkDelayMs: 40 }))]);
    const { telegram, chatId } = system;
    await startStreaming(system);
    const claude = system.claudePid(chatId);
    expect(claude).toBeDefined();
    await system.kill('bridge');
    system.start('bridge');
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes('Line 40 of a long answer')),
      { timeoutMs: 90_000 },
    );
    // The same process: adopted on the worker as locally, not replaced with --resume.
    expect(system.claudePid(chatId)).toBe(claude);
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    expect(texts.filter((t) => t.includes('Line 40 of a long answer'))).toHaveLength(1);
    expect(texts.filter((t) => t.includes('Line 1 of a long answer'))).toHaveLength(1);
  });
});
