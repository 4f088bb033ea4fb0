/**
 * The promise the whole design exists for: either service can die at any moment (kill -9) and come
 * back, and the user sees every answer exactly once, with nothing lost.
 */
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

const LONG_ANSWER = Array.from(
  { length: 40 },
  (_, i) => `Line ${i + 1} of a long answer, streamed slowly.`,
).join('\n');

describe('end to end: gateway and bridge as real processes', () => {
  const startSystem = systemPerTest();

  it('answers a message: placeholder at once, then the exact answer', async () => {
    const system = await startSystem({ rules: [rule('hello', say('Hello **there**! How can I help?'))] });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'hello');
    const final = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes('How can I help?')),
      { timeoutMs: 60_000 },
    );
    // A rich message (the default replies): its text is the model's Markdown, rendered by Telegram.
    expect(final.rich).toBe(true);
    expect(final.text).toBe('Hello **there**! How can I help?');
    expect(final.html).toContain('<b>there</b>');
    // One bot message, not two: the placeholder edited into the answer, or (once the bridge is up) the
    // answer after a draft.
    expect(botMessages(telegram, chatId)).toHaveLength(1);
  });

  it('survives kill -9 of the bridge mid-stream: same answer, once, and a message sent while it was down is delivered', async () => {
    const system = await startSystem({
      rules: [
        rule('long', say(LONG_ANSWER, { chunkSize: 12, chunkDelayMs: 40 })),
        rule('after', say('Got your second message.')),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'long please');
    // Wait until the answer is visibly streaming, then kill the bridge.
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text.includes('Line 3')), {
      timeoutMs: 60_000,
    });
    await system.kill('bridge');
    telegram.sendText(chatId, 'after the crash');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    system.start('bridge');
    const second = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === 'Got your second message.'),
      { timeoutMs: 90_000 },
    );
    expect(second).toBeDefined();
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    // The long answer arrived whole, exactly once.
    expect(texts.filter((t) => t.includes('Line 40 of a long answer')).length).toBe(1);
    expect(texts.filter((t) => t.includes('Line 1 of a long answer')).length).toBe(1);
    const answer = texts.find((t) => t.includes('Line 1 of a long answer')) ?? '';
    expect(answer.replace(/\s+/g, ' ')).toContain(LONG_ANSWER.replace(/\s+/g, ' '));
    // The model saw each user message open exactly one turn: nothing was written twice into the CLI.
    const userTexts = system.model.messageRequests().map((r) => r.view?.userText ?? '');
    expect(new Set(userTexts.filter((t) => t.includes('long please'))).size).toBeLessThanOrEqual(1);
  });

  it('survives kill -9 of the gateway mid-turn: nothing lost, nothing doubled', async () => {
    const system = await startSystem({
      rules: [
        rule('long', say(LONG_ANSWER, { chunkSize: 12, chunkDelayMs: 40 })),
        rule('next', say('Next one done.')),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'long please');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text.includes('Line 2')), {
      timeoutMs: 60_000,
    });
    await system.kill('gateway');
    // Sent while the gateway is dead: it waits at "Telegram" until the gateway polls again.
    telegram.sendText(chatId, 'next');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    system.start('gateway');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Next one done.'), {
      timeoutMs: 90_000,
    });
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes('Line 40 of a long answer')),
      { timeoutMs: 30_000 },
    );
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    expect(texts.filter((t) => t === 'Next one done.')).toHaveLength(1);
    expect(texts.filter((t) => t.includes('Line 40 of a long answer'))).toHaveLength(1);
    expect(telegram.pendingUpdates()).toHaveLength(0);
  });
});
