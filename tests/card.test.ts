/**
 * The progress card through the whole system: a turn that outlasts the show delay gets a card that is
 * pinned silently while the turn runs, shows the tools, and ends closed and unpinned; a short turn never
 * gets one.
 */
import path from 'node:path';
import { read, rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

describe('end to end: the progress card', () => {
  const startSystem = systemPerTest();

  it('shows a pinned card for a long turn, closes it and unpins it at the end; none for a short turn', async () => {
    const system = await startSystem({
      card: { showDelayMs: 1_000 },
      rules: [
        rule('quick', say('Quick answer.')),
        rule(
          'slow',
          (ctx) => read(path.join(ctx.cwd ?? '/', 'notes.txt')),
          say('Read it. '.repeat(30), { chunkSize: 6, chunkDelayMs: 60 }),
        ),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');

    // The conversation's first message also starts its Claude process, which can take longer than the
    // card's delay on a loaded machine: warm it up, then time a short turn of a running session.
    telegram.sendText(chatId, 'warm up');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text.includes('warm up')), {
      timeoutMs: 60_000,
    });
    // A card the warm-up may have shown is not this test's: let its pin and unpin land (a pin waiting
    // for the chat's budget still goes out, then is undone), then count only later pins.
    const okCalls = (method: string) => telegram.calls(method).filter((c) => c.ok).length;
    let settledSince = Date.now();
    let last = '';
    while (Date.now() - settledSince < 2_500) {
      const now = `${okCalls('pinChatMessage')}/${okCalls('unpinChatMessage')}/${telegram.chat(chatId).pinned.length}`;
      if (now !== last || telegram.chat(chatId).pinned.length > 0) settledSince = Date.now();
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const before = botMessages(telegram, chatId).length;
    const pinsBefore = okCalls('pinChatMessage');
    const unpinsBefore = okCalls('unpinChatMessage');
    telegram.sendText(chatId, 'quick');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Quick answer.'), {
      timeoutMs: 60_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // The answer, and no card.
    expect(botMessages(telegram, chatId)).toHaveLength(before + 1);
    expect(telegram.chat(chatId).pinned).toHaveLength(0);

    telegram.sendText(chatId, 'slow please');
    const card = await telegram.waitFor(
      () => {
        const pinned = telegram.chat(chatId).pinned.at(-1);
        return pinned && pinned.from === 'bot' ? pinned : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(card.silent, 'pinned without notifying the user').toBe(true);
    const reply = 'Read it. '.repeat(30).trim();
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === reply), {
      timeoutMs: 60_000,
    });
    // The card ends closed and unpinned; its final state says the turn is done and names the tool.
    const closed = await telegram.waitFor(
      () => {
        const now = telegram.message(chatId, card.messageId);
        return now && telegram.chat(chatId).pinned.length === 0 && /Done/.test(now.text) ? now : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(closed.text).toMatch(/Read/);
    expect(closed.silent).toBe(true);
    expect(closed.text).toMatch(/notes\.txt/);
    // Exactly one pin and one unpin of the card. (The call log is written when a response leaves, just
    // after the effect a waitFor sees, so wait for it and let late calls land.)
    await telegram.waitFor(
      () => telegram.calls('unpinChatMessage').filter((c) => c.ok).length > unpinsBefore,
      { timeoutMs: 5_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const pins = telegram.calls('pinChatMessage').filter((c) => c.ok);
    const unpins = telegram.calls('unpinChatMessage').filter((c) => c.ok);
    expect(pins).toHaveLength(pinsBefore + 1);
    expect(unpins).toHaveLength(unpinsBefore + 1);
    expect(telegram.stats().tooManyRequests).toBe(0);
  });
});
