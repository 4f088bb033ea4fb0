/**
 * The newcomer's first look at the scripted sandbox: the chat opens with the list of demos, `help` (sent
 * through the whole system, so the model sees it after the bridge's `[telegram …]` header) answers with
 * that list instead of echoing it, and `run a command` asks permission as the list says.
 */
import { SCRIPTED_DEMOS } from '@switchyard/sandbox';
import { afterAll, expect, test } from 'vitest';
import { type SandboxProcess, startSandboxProcess, until, viewApi } from './sandbox-process.js';

const ANSWER_BUDGET_MS = 60_000;
let sandbox: SandboxProcess | undefined;

afterAll(async () => {
  await sandbox?.stop();
});

test('the scripted sandbox shows its demos at start and on `help`, and `run a command` asks', async () => {
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

  const run = await api.send(chatId, 'run a command');
  const prompt = await until(
    'a permission prompt for the command',
    async () =>
      (await messagesOf()).find(
        (m) => m.from === 'bot' && m.messageId > run.messageId && /Bash wants to/.test(m.text),
      ),
    ANSWER_BUDGET_MS,
  );
  expect(prompt.text).toContain('node -e');

  const report = await sandbox.stop();
  sandbox = undefined;
  expect(report.leftovers).toEqual([]);
}, 180_000);
