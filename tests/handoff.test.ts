/**
 * `/handoff` end to end (gateway and bridge as real processes, the real CLI, the Telegram stand-in): the
 * conversation's Claude process stops, the chat gets the command that continues the session at the
 * terminal (an id whose transcript exists), no process of Switchyard's is on the session until the next
 * message, and a next message that finds the terminal still on it says so and waits for it instead of
 * starting a second CLI. A handoff asked for during a turn waits for it, or stops it at the press of a button.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { liveProcesses } from './processes.js';
import { botMessages, type System, systemPerTest } from './system.js';
import { botSays, bridgeConnected, openTerminal } from './terminal.js';

const startSystem = systemPerTest();

/** The `claude` processes running in the test's directory (the bridge's and the terminal's). */
function claudes(system: System): number[] {
  return liveProcesses()
    .filter((p) => p.cwd.startsWith(`${system.dir}/`) && /claude/.test(p.command))
    .map((p) => p.pid);
}

/** The session id the handoff message names, from its `claude --resume <id>`. */
function handedOffId(text: string): string {
  const id = /claude --resume ([0-9a-f-]{36})/.exec(text)?.[1];
  if (!id) throw new Error(`no resume command in ${text}`);
  return id;
}

describe('/handoff', () => {
  it('stops the process, prints the resume command, and the next message waits for the terminal', async () => {
    const system = await startSystem({
      rules: [rule('otter', say('Noted: otter.')), rule('back on the phone', say('Welcome back.'))],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    telegram.sendText(chatId, 'remember otter');
    await botSays(system, chatId, (text) => text === 'Noted: otter.', 90_000);
    expect(system.claudePid(chatId)).toBeDefined();
    telegram.sendText(chatId, '/handoff');
    const handed = await botSays(system, chatId, (text) => text.includes('claude --resume'), 60_000);
    const id = handedOffId(handed.text);
    const work = path.join(system.dir, 'work');
    // The command is copyable as it stands: in a code block, with the directory and the config dir.
    expect(handed.html).toContain('<pre>');
    expect(handed.text).toContain(
      `cd ${work} && CLAUDE_CONFIG_DIR=${path.join(system.dir, 'claude-config')} claude --resume ${id}`,
    );
    const transcript = path.join(
      system.dir,
      'claude-config',
      'projects',
      work.replace(/[^a-zA-Z0-9]/g, '-'),
      `${id}.jsonl`,
    );
    expect(existsSync(transcript)).toBe(true);
    // No Claude process is left on it: the conversation's is gone, and none runs in the directory.
    expect(system.claudePid(chatId)).toBeUndefined();
    expect(claudes(system)).toEqual([]);

    // At the desk: the developer continues the session and leaves it open.
    const desk = openTerminal(system, ['--resume', id]);
    try {
      await desk.shown();
      telegram.sendText(chatId, 'back on the phone');
      const waits = await botSays(system, chatId, (text) => text.includes('still open elsewhere'), 60_000);
      expect(waits.text).toContain(`pid ${desk.pid}`);
      // It waits: no second CLI on the session while the terminal's runs.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(system.claudePid(chatId)).toBeUndefined();
      expect(claudes(system)).toEqual([desk.pid]);
    } finally {
      await desk.close();
    }
    // The terminal closed: the message goes in, to the same session, with its context.
    await botSays(system, chatId, (text) => text === 'Welcome back.', 90_000);
    const last = system.model.messageRequests().at(-1);
    expect(JSON.stringify(last?.body)).toContain('remember otter');
    expect(system.logs()).toContain(`"resume":"${id}"`);
  }, 240_000);

  it('during a turn: offers to hand off when it ends, and its button stops the turn and hands off now', async () => {
    const slow = Array.from({ length: 150 }, (_, i) => `Line ${i + 1} of a slow answer.`).join('\n');
    const system = await startSystem({
      rules: [rule('slow', say(slow, { chunkSize: 10, chunkDelayMs: 100 }))],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    telegram.sendText(chatId, 'slow please');
    // The answer streams for about 40 s (a private chat shows it as a draft, not yet as a message).
    await telegram.waitFor(() => system.model.messageRequests().length > 0 || undefined, {
      timeoutMs: 90_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    telegram.sendText(chatId, '/handoff');
    const offer = await botSays(system, chatId, (text) => text.includes('A turn is running'), 60_000);
    telegram.pressButton(chatId, offer.messageId, { text: '⏹ Stop the turn and hand off now' });
    const handed = await botSays(system, chatId, (text) => text.includes('claude --resume'), 60_000);
    handedOffId(handed.text);
    expect(system.claudePid(chatId)).toBeUndefined();
    expect(claudes(system)).toEqual([]);
    // The turn was cut, not finished.
    expect(botMessages(telegram, chatId).some((m) => m.text.includes('Line 150 of a slow answer.'))).toBe(
      false,
    );
  }, 240_000);

  it('during a turn, without the button: hands off once the turn has ended, its answer whole', async () => {
    const answer = Array.from({ length: 40 }, (_, i) => `Part ${i + 1} of a steady answer.`).join('\n');
    const system = await startSystem({
      rules: [rule('steady', say(answer, { chunkSize: 10, chunkDelayMs: 60 }))],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    telegram.sendText(chatId, 'steady please');
    await telegram.waitFor(() => system.model.messageRequests().length > 0 || undefined, {
      timeoutMs: 90_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    telegram.sendText(chatId, '/handoff');
    const offer = await botSays(system, chatId, (text) => text.includes('A turn is running'), 60_000);
    const handed = await botSays(system, chatId, (text) => text.includes('claude --resume'), 90_000);
    expect(handed.messageId).toBeGreaterThan(offer.messageId);
    // The turn ran to its end first.
    expect(botMessages(telegram, chatId).some((m) => m.text.includes('Part 40 of a steady answer.'))).toBe(
      true,
    );
    expect(system.claudePid(chatId)).toBeUndefined();
    expect(claudes(system)).toEqual([]);
  }, 240_000);

  it('a bridge killed while a handoff waits for its turn: the restarted bridge hands off once the turn has ended', async () => {
    const answer = Array.from({ length: 60 }, (_, i) => `Step ${i + 1} of a long answer.`).join('\n');
    const system = await startSystem({
      rules: [rule('long', say(answer, { chunkSize: 10, chunkDelayMs: 80 }))],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    telegram.sendText(chatId, 'long please');
    await telegram.waitFor(() => system.model.messageRequests().length > 0 || undefined, {
      timeoutMs: 90_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    telegram.sendText(chatId, '/handoff');
    const offer = await botSays(system, chatId, (text) => text.includes('A turn is running'), 60_000);
    // The handoff waits in the bridge; the bridge dies, and is started again while the turn goes on.
    await system.kill('bridge', 'SIGKILL');
    system.start('bridge');
    const handed = await botSays(system, chatId, (text) => text.includes('claude --resume'), 120_000);
    expect(handed.messageId).toBeGreaterThan(offer.messageId);
    expect(botMessages(telegram, chatId).some((m) => m.text.includes('Step 60 of a long answer.'))).toBe(
      true,
    );
    expect(system.claudePid(chatId)).toBeUndefined();
    expect(claudes(system)).toEqual([]);
    expect(system.logs()).toContain('handoffs left waiting by the last bridge');
  }, 240_000);
});
