/**
 * An agent's bridge on another host (issue 29), end to end through a real OpenSSH server: the gateway
 * and its link (`switchyard link`, an `ssh -N -R` client) on one side, the bridge with its own config,
 * state and exchange directories on the other, the worker's socket served by sshd. The two "hosts" are
 * this machine; only the ssh link joins them. What a local agent promises holds through the link: the
 * answer once and whole when the link is killed mid-stream, a message sent meanwhile delivered, and the
 * worker's bridge killed and restarted adopting the `claude` that kept running; and files cross the link
 * as protocol transfers, each side with its own exchange directory.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rule, say, sendFile } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { download, sha256 } from './downloads.js';
import { liveProcesses } from './processes.js';
import { remoteOf, startAndAsk } from './remote-system.js';
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

/** The files directly in `dir` whose names start with `prefix`. */
function filesIn(dir: string, prefix: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix) && !name.endsWith('.part'))
    .map((name) => path.join(dir, name));
}

/** The first value `check` returns, asked every 2 ms (a file's growth raises no sandbox event). */
async function poll<T>(check: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`nothing found within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
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

  it("survives the worker's sshd restarted mid-stream: the link comes back by itself, the answer once, a message sent meanwhile delivered", async () => {
    const system = await start([
      rule('long', say(LONG_ANSWER, { chunkSize: 12, chunkDelayMs: 40 })),
      rule('after', say('Got your message after the restart.')),
    ]);
    const { telegram, chatId } = system;
    await startStreaming(system);
    const server = sshd.sshd();
    // sshd's sessions end with it: the link's client loses its forward, and the bridge its gateway.
    await server.stop();
    telegram.sendText(chatId, 'after the sshd restart');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await server.start();
    const second = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === 'Got your message after the restart.'),
      { timeoutMs: 90_000 },
    );
    expect(second).toBeDefined();
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    expect(texts.filter((t) => t.includes('Line 40 of a long answer'))).toHaveLength(1);
    expect(texts.filter((t) => t.includes('Line 1 of a long answer'))).toHaveLength(1);
    expect(texts.filter((t) => t === 'Got your message after the restart.')).toHaveLength(1);
    const userTexts = system.model.messageRequests().map((r) => r.view?.userText ?? '');
    expect(userTexts.filter((t) => t.includes('after the sshd restart'))).toHaveLength(1);
  });

  it('delivers a message sent while the link is down and the gateway restarted, once, when the link is back', async () => {
    const system = await start([
      rule('hello', say('Hello from the worker host.')),
      rule('queued', say('Answered once the link was back.')),
    ]);
    const { telegram, chatId } = system;
    await startAndAsk(system, 'hello', 'Hello from the worker host.');
    const server = sshd.sshd();
    await server.stop();
    await system.kill('gateway');
    telegram.sendText(chatId, 'queued while the link is down');
    system.start('gateway');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await server.start();
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === 'Answered once the link was back.'),
      { timeoutMs: 90_000 },
    );
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    expect(texts.filter((t) => t === 'Answered once the link was back.')).toHaveLength(1);
    expect(texts.filter((t) => t === 'Hello from the worker host.')).toHaveLength(1);
    const userTexts = system.model.messageRequests().map((r) => r.view?.userText ?? '');
    expect(userTexts.filter((t) => t.includes('queued while the link is down'))).toHaveLength(1);
  });

  it('carries a document in and a file out over the link, bytes intact, each side with its own exchange', async () => {
    // Larger than a chunk many times over, so each crosses as a stream of acknowledged chunks.
    const plan = Buffer.from(`plan line ${Math.random()}\n`.repeat(40_000));
    const artifact = Buffer.from(`artifact ${Math.random()}\n`.repeat(60_000));
    const system = await start([
      rule('read the plan', sendFile('artifact.bin', 'The build'), say('Artifact sent.')),
    ]);
    const { telegram, chatId } = system;
    writeFileSync(path.join(system.dir, 'work', 'artifact.bin'), artifact);
    system.start('gateway');
    system.start('link');
    system.start('bridge');
    telegram.sendDocument(chatId, { data: plan, fileName: 'plan.txt', caption: 'read the plan' });
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Artifact sent.'), {
      timeoutMs: 90_000,
    });
    // Each side has an exchange of its own: nothing the protocol needs can pass through a shared disk.
    const gatewayFiles = path.join(system.dir, 'state', 'files');
    const workerFiles = path.join(system.dir, 'worker', 'state', 'files');
    expect(statSync(gatewayFiles).ino).not.toBe(statSync(workerFiles).ino);

    // In: Claude was told a path in the worker's exchange, whose bytes are the document's.
    const told = system.model
      .messageRequests()
      .map((r) => r.view?.userText ?? '')
      .find((t) => t.includes('read the plan'));
    const seen = /\[file: ([^\s\]]+)/.exec(told ?? '')?.[1];
    expect(path.dirname(seen ?? '')).toBe(workerFiles);
    expect(sha256(readFileSync(seen ?? ''))).toBe(sha256(plan));
    // The gateway's own copy, downloaded from Telegram, is another file.
    const [downloaded] = filesIn(gatewayFiles, 'in-');
    expect(sha256(readFileSync(downloaded ?? ''))).toBe(sha256(plan));
    expect(statSync(downloaded ?? '').ino).not.toBe(statSync(seen ?? '').ino);

    // Out: the chat holds the artifact's bytes, once, uploaded from the gateway's own exchange.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const documents = botMessages(telegram, chatId).filter((m) => m.kind === 'document');
    expect(documents).toHaveLength(1);
    expect(sha256(await download(telegram, documents[0]?.file?.fileId ?? ''))).toBe(sha256(artifact));
    const carried = filesIn(gatewayFiles, 'out-');
    expect(carried).toHaveLength(1);
    expect(sha256(readFileSync(carried[0] ?? ''))).toBe(sha256(artifact));
  });

  it('resumes a file out cut by the ssh link dying mid-transfer: the chat gets it once, bytes intact', async () => {
    // Large enough that the transfer still runs when its first bytes land (under the 20 MB a bot downloads).
    const artifact = Buffer.from(`big artifact ${Math.random()}\n`.repeat(600_000));
    const system = await start([rule('ship it', sendFile('big.bin', 'Shipped'), say('Big one sent.'))]);
    const { telegram, chatId } = system;
    writeFileSync(path.join(system.dir, 'work', 'big.bin'), artifact);
    const gatewayFiles = path.join(system.dir, 'state', 'files');
    system.start('gateway');
    system.start('link');
    system.start('bridge');
    telegram.sendText(chatId, 'ship it');
    // The gateway holds part of the file, not all of it: the link dies between two chunks.
    const partial = await poll(() => {
      const names = existsSync(gatewayFiles) ? readdirSync(gatewayFiles) : [];
      const [part] = names.filter((n) => n.startsWith('out-') && n.endsWith('.part'));
      const size = part ? (statSync(path.join(gatewayFiles, part), { throwIfNoEntry: false })?.size ?? 0) : 0;
      return size > 0 && size < artifact.length / 2 ? size : undefined;
    }, 60_000);
    const first = sshClientOf(system);
    expect(first).toBeDefined();
    process.kill(first as number, 'SIGKILL');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Big one sent.'), {
      timeoutMs: 90_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(sshClientOf(system)).not.toBe(first);
    const documents = botMessages(telegram, chatId).filter((m) => m.kind === 'document');
    expect(documents).toHaveLength(1);
    expect(sha256(await download(telegram, documents[0]?.file?.fileId ?? ''))).toBe(sha256(artifact));
    // Resumed, not restarted: the gateway's transfer log names the resume point past the cut's bytes.
    expect(partial).toBeGreaterThan(0);
    const resumed = system
      .logs()
      .split('\n')
      .filter((line) => line.includes('"event":"transfer_resumed"'))
      .map((line) => (JSON.parse(line) as { from: number }).from);
    expect(Math.max(0, ...resumed)).toBeGreaterThanOrEqual(partial);
  });

  it('delivers a document once when the gateway is killed mid-transfer: resumed at its restart, taken once', async () => {
    // Under the 20 MB a bot downloads, and large enough that the gateway dies with part of it on the worker.
    const big = Buffer.from(`report row ${Math.random()}\n`.repeat(600_000));
    const system = await start([rule('read this', say('Read it.'))]);
    const { telegram, chatId } = system;
    const workerFiles = path.join(system.dir, 'worker', 'state', 'files');
    system.start('gateway');
    system.start('link');
    system.start('bridge');
    telegram.sendDocument(chatId, { data: big, fileName: 'report.txt', caption: 'read this' });
    const partial = await poll(() => {
      const names = existsSync(workerFiles) ? readdirSync(workerFiles) : [];
      const [part] = names.filter((n) => n.startsWith('in-') && n.endsWith('.part'));
      const size = part ? (statSync(path.join(workerFiles, part), { throwIfNoEntry: false })?.size ?? 0) : 0;
      return size > 0 && size < big.length / 2 ? size : undefined;
    }, 60_000);
    await system.kill('gateway');
    // Not taken: the message is not the bridge's until its file is whole on the worker.
    expect(system.model.messageRequests().some((r) => (r.view?.userText ?? '').includes('read this'))).toBe(
      false,
    );
    system.start('gateway');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Read it.'), {
      timeoutMs: 90_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(botMessages(telegram, chatId).filter((m) => m.text === 'Read it.')).toHaveLength(1);
    const told = system.model
      .messageRequests()
      .map((r) => r.view?.userText ?? '')
      .filter((t) => t.includes('read this'));
    expect(new Set(told).size).toBe(1);
    const seen = /\[file: ([^\s\]]+)/.exec(told[0] ?? '')?.[1] ?? '';
    expect(path.dirname(seen)).toBe(workerFiles);
    expect(sha256(readFileSync(seen))).toBe(sha256(big));
    // The restarted gateway's offer went on from the worker's part rather than from nothing.
    const resumed = system
      .logs()
      .split('\n')
      .filter((line) => line.includes('"event":"transfer_resumed"') && line.includes('"service":"bridge"'))
      .map((line) => (JSON.parse(line) as { from: number }).from);
    expect(Math.max(0, ...resumed)).toBeGreaterThanOrEqual(partial);
  });
});
