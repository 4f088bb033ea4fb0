/**
 * A permission prompt outlives the bridge: the bridge is killed while the user is looking at the
 * buttons, a new bridge adopts the same claude process and recovers the open prompt, and the user's
 * press still lets the tool run, once.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { rule, say, write } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, type System, systemPerTest } from './system.js';

describe('end to end: permission prompt across a bridge restart', () => {
  const startSystem = systemPerTest();

  it('recovers the open prompt after kill -9 and runs the tool once when Allow is pressed', async () => {
    const system = await startSystem({
      rules: [
        rule(
          'make a file',
          (ctx) => write(path.join(ctx.cwd ?? '/nonexistent', 'hello.txt'), 'hi\n'),
          say('Wrote hello.txt.'),
        ),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'please make a file');
    const prompt = await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).find((m) =>
          m.replyMarkup?.inline_keyboard.flat().some((b) => b.text.includes('Allow')),
        ),
      { timeoutMs: 60_000 },
    );
    expect(prompt.text).toMatch(/Write/);
    const claudePid = await claudePidOf(system);

    await system.kill('bridge');
    system.start('bridge');
    // The new bridge adopts the same claude (no second CLI on the session) and re-offers the prompt.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await claudePidOf(system)).toBe(claudePid);

    const current = botMessages(telegram, chatId).find((m) =>
      m.replyMarkup?.inline_keyboard.flat().some((b) => b.text.includes('Allow')),
    );
    expect(current, 'a live Allow button after the restart').toBeDefined();
    const press = telegram.pressButton(chatId, (current ?? prompt).messageId, { text: '✅ Allow' });
    await telegram.waitFor(() => telegram.callbackQuery(press.id)?.answer, { timeoutMs: 10_000 });
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes('Wrote hello.txt.')),
      {
        timeoutMs: 60_000,
      },
    );
    const file = path.join(system.dir, 'work', 'hello.txt');
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('hi\n');
    // The tool ran once: the model got exactly one tool result for it.
    const results = system.model.messageRequests().flatMap((r) => r.view?.toolResults ?? []);
    expect(results.length).toBe(1);
  });
});

describe('end to end: permission prompt across a gateway restart', () => {
  const startSystem = systemPerTest();

  it('keeps the buttons working after kill -9 of the gateway, and answers once', async () => {
    const system = await startSystem({
      rules: [
        rule(
          'make a file',
          (ctx) => write(path.join(ctx.cwd ?? '/nonexistent', 'after-gateway.txt'), 'ok\n'),
          say('Wrote after-gateway.txt.'),
        ),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'please make a file');
    const prompt = await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).find((m) =>
          m.replyMarkup?.inline_keyboard.flat().some((b) => b.text.includes('Allow')),
        ),
      { timeoutMs: 60_000 },
    );
    await system.kill('gateway');
    system.start('gateway');
    // Pressed twice, as impatient people do: the tool runs once.
    const first = telegram.pressButton(chatId, prompt.messageId, { text: '✅ Allow' });
    const second = telegram.pressButton(chatId, prompt.messageId, { text: '✅ Allow' }, { force: true });
    await telegram.waitFor(() => telegram.callbackQuery(first.id)?.answer, { timeoutMs: 20_000 });
    await telegram.waitFor(() => telegram.callbackQuery(second.id)?.answer, { timeoutMs: 20_000 });
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes('Wrote after-gateway.txt.')),
      {
        timeoutMs: 60_000,
      },
    );
    expect(readFileSync(path.join(system.dir, 'work', 'after-gateway.txt'), 'utf8')).toBe('ok\n');
    const results = system.model.messageRequests().flatMap((r) => r.view?.toolResults ?? []);
    expect(results.length).toBe(1);
  });
});

/** The claude pid the bridge recorded (bridge/bridge.json). */
async function claudePidOf(system: System): Promise<number> {
  const file = path.join(system.dir, 'state', 'bridge', 'bridge.json');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      const pid = JSON.parse(readFileSync(file, 'utf8'))?.child?.pid;
      if (typeof pid === 'number') return pid;
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no claude pid recorded in ${file}`);
}
