/**
 * The newcomer's first look at the scripted sandbox: the chat opens with the list of demos, `help` (sent
 * through the whole system, so the model sees it after the bridge's `[telegram …]` header) answers with
 * that list instead of echoing it, and `run a command` asks permission as the list says. The scripted
 * model spends nothing, so a card's cost and `/status` say their figures are simulated.
 */
import { SCRIPTED_DEMOS } from '@switchyard/sandbox';
import { afterAll, expect, test } from 'vitest';
import { type SandboxProcess, startSandboxProcess, until, viewApi } from './sandbox-process.js';

const ANSWER_BUDGET_MS = 60_000;
let sandbox: SandboxProcess | undefined;

afterAll(async () => {
  await sandbox?.stop();
});

test('the scripted sandbox shows its demos at start and on `help`, `run a command` asks, and costs read as simulated', async () => {
  sandbox = await startSandboxProcess({ timeoutMs: ANSWER_BUDGET_MS });
  const api = viewApi(sandbox.url);
  const messagesOf = async () => (await api.state()).chats[0]?.messages ?? [];

  const welcome = (await messagesOf()).find((m) => m.from === 'bot');
  for (const demo of SCRIPTED_DEMOS) expect(welcome?.text).toContain(demo.say);

  const chatId = (await api.state()).chats[0]?.chat.id as number;
  const help = await api.send(chatId, 'help');
  const answer = await until(
    'the answer to help',
    async () =>
      (await messagesOf()).find(
        (m) => m.from === 'bot' && m.messageId > help.messageId && /Anything else is echoed/.test(m.text),
      ),
    ANSWER_BUDGET_MS,
  );
  expect(answer.text).not.toMatch(/You said/);
  for (const demo of SCRIPTED_DEMOS) expect(answer.text).toContain(demo.say);

  // Nothing was spent: the card of a long turn and /status say that its costs are simulated.
  const long = await api.send(chatId, 'long answer');
  const card = await until(
    'the final card of a long answer',
    async () =>
      (await messagesOf()).find((m) => m.from === 'bot' && m.messageId > long.messageId && /💰/.test(m.text)),
    ANSWER_BUDGET_MS,
  );
  expect(card.text).toMatch(/💰 .*\(simulated: nothing was spent\)/);
  const status = await api.send(chatId, '/status');
  const reply = await until(
    'the /status reply',
    async () =>
      (await messagesOf()).find(
        (m) => m.from === 'bot' && m.messageId > status.messageId && /Cost so far/.test(m.text),
      ),
    ANSWER_BUDGET_MS,
  );
  expect(reply.text).toMatch(/Cost so far: \$[\d.]+ \(simulated: nothing was spent\)/);
  expect(reply.text).toMatch(/Model: .* \(simulated by the scripted model\)/);

  const run = await api.send(chatId, 'run a command');
  const prompt = await until(
    'a permission prompt for the command',
    async () =>
      (await messagesOf()).find(
        (m) =>
          m.from === 'bot' && m.messageId > run.messageId && /Claude wants to run this command/.test(m.text),
      ),
    ANSWER_BUDGET_MS,
  );
  expect(prompt.text).toContain('node -e');

  const report = await sandbox.stop();
  sandbox = undefined;
  expect(report.leftovers).toEqual([]);
}, 180_000);
