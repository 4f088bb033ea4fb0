/**
 * The scripted sandbox's `delegate` with the real CLI: a background sub-agent outlives its turn, the CLI
 * reports it done (`task_notification`) and starts a turn of its own with the result. The sub-agent's
 * end names the launching turn, which the gateway no longer held, so the end was dropped and every next
 * card read "✅ Done · 1 sub-agent still running" and stayed pinned. Now no card is left pinned or
 * "still running" across the next two turns.
 */
import { afterAll, expect, test } from 'vitest';
import { type SandboxProcess, startSandboxProcess, until, viewApi } from './sandbox-process.js';

const ANSWER_BUDGET_MS = 60_000;
let sandbox: SandboxProcess | undefined;

afterAll(async () => {
  await sandbox?.stop();
});

test('after a delegated sub-agent finished, the next two turns end with no card pinned or still running', async () => {
  sandbox = await startSandboxProcess({ timeoutMs: ANSWER_BUDGET_MS });
  const api = viewApi(sandbox.url);
  const chatId = (await api.state()).chats[0]?.chat.id as number;
  const chat = async () => (await api.state()).chats.find((c) => c.chat.id === chatId);
  const botAfter = async (id: number) =>
    (await chat())?.messages.filter((m) => m.from === 'bot' && m.messageId > id) ?? [];

  const delegate = await api.send(chatId, 'delegate');
  await until(
    'the sub-agent to finish',
    async () => (await botAfter(delegate.messageId)).find((m) => /The sub-agent finished/.test(m.text)),
    ANSWER_BUDGET_MS,
  );
  for (const text of ['next one', 'and another']) {
    const sent = await api.send(chatId, text);
    await until(
      `the answer to "${text}"`,
      async () =>
        (await botAfter(sent.messageId)).find((m) => m.text.includes(text) && m.html.includes('<i>')),
      ANSWER_BUDGET_MS,
    );
  }
  await until(
    'no pinned card',
    async () => ((await chat())?.chat.pinned.length === 0 ? true : undefined),
    20_000,
  );
  const cards = (await botAfter(delegate.messageId)).filter((m) => /Sub-agents/.test(m.text));
  for (const card of cards) expect(card.text).not.toMatch(/still running|continues in the next card/);

  const report = await sandbox.stop();
  sandbox = undefined;
  expect(report.leftovers).toEqual([]);
}, 180_000);
