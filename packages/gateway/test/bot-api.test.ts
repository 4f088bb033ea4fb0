/**
 * The gateway's Bot API transformer chain: a 429 storm is waited out as Telegram asks, for up to a
 * minute, before a call fails; other errors are not this transformer's to retry.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createBudget } from '../src/core/telegram/send-pacing.js';
import { createBot, waitOutRateLimits } from '../src/io/telegram/bot-api.js';
import { memoryLogger } from './harness.js';

type Answer =
  | { ok: true; result: true }
  | { ok: false; error_code: number; description: string; parameters?: { retry_after: number } };

const TOO_MANY = {
  ok: false,
  error_code: 429,
  description: 'Too Many Requests: retry after 1',
  parameters: { retry_after: 1 },
} as const;

/** Runs one call through the transformer against scripted answers; returns the result and the waits. */
async function call(answers: Answer[], patienceMs?: number) {
  const sleeps: number[] = [];
  let calls = 0;
  const transformer = waitOutRateLimits(patienceMs, async (ms) => {
    sleeps.push(ms);
  });
  // biome-ignore lint/suspicious/noExplicitAny: a structural stand-in for grammY's raw call
  const prev: any = async () => answers[Math.min(calls++, answers.length - 1)];
  const result = await transformer(prev, 'editMessageText', { chat_id: 1, message_id: 2, text: 'x' });
  return { result, sleeps, calls };
}

describe('waitOutRateLimits', () => {
  it('waits out a storm of one-second 429s longer than auto-retry’s five attempts (a final edit cut short)', async () => {
    const { result, sleeps, calls } = await call([...Array(8).fill(TOO_MANY), { ok: true, result: true }]);
    expect(result.ok).toBe(true);
    expect(calls).toBe(9);
    expect(sleeps).toEqual(Array(8).fill(1_000));
  });

  it('hands the 429 on once its patience is spent', async () => {
    const { result, sleeps } = await call([TOO_MANY], 3_000);
    expect(result).toMatchObject({ ok: false, error_code: 429 });
    expect(sleeps).toEqual([1_000, 1_000, 1_000]);
  });

  it('passes other errors and successes through at once', async () => {
    expect(await call([{ ok: false, error_code: 400, description: 'Bad Request' }])).toMatchObject({
      calls: 1,
      sleeps: [],
    });
    expect(await call([{ ok: true, result: true }])).toMatchObject({ calls: 1, sleeps: [] });
  });
});

describe('createBot', () => {
  it('hands an unreachable Telegram to getMe and getUpdates callers at once, who log and retry it', async () => {
    // A port nothing listens on: every connection is refused.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const bot = createBot({
      token: '1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      apiRoot: `http://127.0.0.1:${port}`,
      budget: createBudget(),
      logger: memoryLogger(),
    });
    for (const call of [() => bot.api.getMe(), () => bot.api.getUpdates({ timeout: 0 })]) {
      const started = performance.now();
      await expect(call()).rejects.toThrow();
      expect(performance.now() - started).toBeLessThan(2000);
    }
  });
});
