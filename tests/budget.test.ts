/**
 * The daily budget through the whole system, with the real CLI: once the day's turns cost the agent's
 * budget (what the CLI reported for them), the next message does not reach the model, its sender is told
 * what was spent and when the budget resets, and a gateway restart does not re-send it. (The next day
 * letting messages through again is pinned down on a manual clock: packages/gateway/test/budget/.)
 */
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

describe('end to end: daily budget', () => {
  const startSystem = systemPerTest();

  it('the turn after the budget is spent does not reach the model, and the user is told once', async () => {
    const system = await startSystem({
      rules: [rule(/first/, say('First answer.')), rule(/.*/, say('Should never be said.'))],
      // Any turn of the scripted model costs more than this (the CLI prices its tokens).
      agent: () => ({ timezone: 'Europe/Berlin', budget: { dailyUsd: 0.000001 } }),
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'first');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'First answer.'), {
      timeoutMs: 90_000,
    });
    const asked = () => system.model.messageRequests().filter((r) => r.view?.kind !== undefined).length;
    // The turn's end (with its cost) reaches the gateway just after its text.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const before = asked();

    telegram.sendText(chatId, 'second');
    const notice = await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).find((m) => m.text.startsWith('The agent’s daily budget of $0.000')),
      { timeoutMs: 30_000 },
    );
    expect(notice.text).toMatch(/\$0\.\d{3} spent today/);
    expect(notice.text).toMatch(/resets at \d{4}-\d\d-\d\d 00:00 \(Europe\/Berlin\)/);
    // The marker of a refused message says why where it has one (a placeholder: groups, classic replies);
    // the notice is given once a day, so a further refused message gets no second one.
    telegram.sendText(chatId, 'third');
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    // A restart of the gateway does not re-send what the budget refused.
    await system.kill('gateway', 'SIGTERM');
    system.start('gateway');
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(asked()).toBe(before);
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    expect(texts).not.toContain('Should never be said.');
    expect(texts.filter((t) => t.startsWith('The agent’s daily budget'))).toHaveLength(1);
  });
});
