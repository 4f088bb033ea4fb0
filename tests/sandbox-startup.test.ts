/**
 * The newcomer's first minute: `switchyard sandbox` on a fresh state directory comes up and answers a
 * first message within 30 s (scripted model, real gateway, bridge and claude CLI), seen through the web
 * view's HTTP API as the page sees it. Ctrl-C then leaves nothing running.
 */
import { afterAll, expect, test } from 'vitest';
import { type SandboxProcess, startSandboxProcess, until, viewApi } from './sandbox-process.js';

const FIRST_ANSWER_BUDGET_MS = 30_000;

let sandbox: SandboxProcess | undefined;

afterAll(async () => {
  await sandbox?.stop();
});

test('a fresh sandbox answers its first message within 30 s, and Ctrl-C leaves nothing running', async () => {
  sandbox = await startSandboxProcess({ timeoutMs: FIRST_ANSWER_BUDGET_MS });
  const api = viewApi(sandbox.url);
  const state = await api.state();
  expect(state.banner).toMatch(/scripted/i);
  const chatId = state.chats[0]?.chat.id;
  expect(chatId).toBeDefined();

  const sentAt = performance.now();
  const sent = await api.send(chatId as number, 'hello sandbox');
  const botReply = async () =>
    (await api.state()).chats
      .find((c) => c.chat.id === chatId)
      ?.messages.find((m) => m.from === 'bot' && m.messageId > sent.messageId);
  const first = await until('a first reply', botReply, FIRST_ANSWER_BUDGET_MS);
  const firstAt = performance.now();
  const answer = await until(
    'the finished answer',
    async () => {
      const m = await botReply();
      // The answer is rendered from Markdown: the italic hint has become an entity.
      return m && /hello sandbox/.test(m.text) && m.html.includes('<i>') ? m : undefined;
    },
    FIRST_ANSWER_BUDGET_MS,
  );
  const answeredAt = performance.now();
  // A message in the first moment after start waits for the connecting bridge silently and takes the
  // normal path: a draft, then the answer as one message — no "agent restarting" notice before it.
  expect(first.messageId).toBe(answer.messageId);
  expect(first.text).not.toMatch(/restarting|queued/);

  const total = answeredAt - sandbox.spawnedAt;
  console.log(
    `sandbox startup: URL printed after ${Math.round(sandbox.urlAfterMs)} ms; first message sent → first reply ` +
      `${Math.round(firstAt - sentAt)} ms, → finished answer ${Math.round(answeredAt - sentAt)} ms; ` +
      `spawn → finished answer ${Math.round(total)} ms`,
  );
  expect(total).toBeLessThan(FIRST_ANSWER_BUDGET_MS);

  const stopped = await sandbox.stop();
  sandbox = undefined;
  console.log(`sandbox stop: exited (${stopped.exit}) ${Math.round(stopped.exitAfterMs)} ms after SIGINT`);
  expect(stopped.leftovers, 'processes left running after Ctrl-C').toEqual([]);
  expect(stopped.exit).toBe(0);
});
