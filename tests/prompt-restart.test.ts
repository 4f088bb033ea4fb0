/**
 * A permission prompt outlives either service: killed while the user looks at the buttons, the
 * bridge comes back adopting the same claude and re-offers the prompt, or the gateway comes back with
 * the prompt in SQLite; either way the user's press lets the tool run, once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { recordedProcesses } from '@switchyard/agent-bridge';
import { rule, say, write } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, type System, systemPerTest } from './system.js';

const FILE = 'hello.txt';
const hasAllow = (m: { replyMarkup?: { inline_keyboard: { text: string }[][] } }) =>
  m.replyMarkup?.inline_keyboard.flat().some((b) => b.text.includes('Allow')) ?? false;

/** Starts both services, asks for a file to be written, and returns the prompt message. */
async function openWritePrompt(startSystem: ReturnType<typeof systemPerTest>) {
  const system = await startSystem({
    rules: [
      rule(
        'make a file',
        (ctx) => write(path.join(ctx.cwd ?? '/nonexistent', FILE), 'hi\n'),
        say('Wrote it.'),
      ),
    ],
  });
  const { telegram, chatId } = system;
  system.start('gateway');
  system.start('bridge');
  telegram.sendText(chatId, 'please make a file');
  const prompt = await telegram.waitFor(() => botMessages(telegram, chatId).find(hasAllow), {
    timeoutMs: 60_000,
  });
  expect(prompt.text).toMatch(/^🔐 Claude wants to write hello\.txt \(/u);
  return { system, prompt };
}

/** Waits for the turn to finish, then checks the tool ran exactly once and did its work. */
async function expectToolRanOnce(system: System) {
  const { telegram, chatId } = system;
  await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Wrote it.'), {
    timeoutMs: 60_000,
  });
  expect(readFileSync(path.join(system.dir, 'work', FILE), 'utf8')).toBe('hi\n');
  const results = system.model.messageRequests().flatMap((r) => r.view?.toolResults ?? []);
  expect(results.length).toBe(1);
}

describe('end to end: a permission prompt across restarts', () => {
  const startSystem = systemPerTest();

  it('bridge kill -9: the same claude is adopted, the prompt re-offered, and Allow runs the tool once', async () => {
    const { system, prompt } = await openWritePrompt(startSystem);
    const { telegram, chatId } = system;
    const claudePid = await claudePidOf(system);
    await system.kill('bridge');
    system.start('bridge');
    // The new bridge adopts the same claude (no second CLI on the session) and re-offers the prompt.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await claudePidOf(system)).toBe(claudePid);
    const current = botMessages(telegram, chatId).find(hasAllow);
    expect(current, 'a live Allow button after the restart').toBeDefined();
    const press = telegram.pressButton(chatId, (current ?? prompt).messageId, { text: '✅ Allow' });
    await telegram.waitFor(() => telegram.callbackQuery(press.id)?.answer, { timeoutMs: 10_000 });
    await expectToolRanOnce(system);
  });

  it('gateway kill -9: the buttons still work, and a double press runs the tool once', async () => {
    const { system, prompt } = await openWritePrompt(startSystem);
    const { telegram, chatId } = system;
    await system.kill('gateway');
    system.start('gateway');
    // Pressed twice, as impatient people do.
    const first = telegram.pressButton(chatId, prompt.messageId, { text: '✅ Allow' });
    const second = telegram.pressButton(chatId, prompt.messageId, { text: '✅ Allow' }, { force: true });
    await telegram.waitFor(() => telegram.callbackQuery(first.id)?.answer, { timeoutMs: 20_000 });
    await telegram.waitFor(() => telegram.callbackQuery(second.id)?.answer, { timeoutMs: 20_000 });
    await expectToolRanOnce(system);
  });
});

/** The claude pid the bridge recorded (the conversation's `bridge.json` under bridge/). */
async function claudePidOf(system: System): Promise<number> {
  const dir = path.join(system.dir, 'state', 'bridge');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const pid = recordedProcesses(dir)[0]?.record.pid;
    if (typeof pid === 'number') return pid;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no claude pid recorded under ${dir}`);
}
