/**
 * A subscription's usage limit waited out, through the whole system with the real CLI logged in by a
 * subscription token (`CLAUDE_CODE_OAUTH_TOKEN`) against the scripted Messages API, which answers 429 with
 * the unified rate-limit headers until a reset a few seconds away. The chat is told once when the work
 * goes on, nothing else is said about the limit, and after the reset every message sent meanwhile is
 * answered without anyone sending it again.
 * Before the wait existed the same gave five warnings ("usage limit reached", the CLI's "You've hit your
 * limit" twice, "The turn failed … Try again later." twice) and no answer at all.
 */
import { type Step, say, type TurnContext, usageLimited } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

const WORDS = ['alpha', 'bravo', 'charlie'] as const;

describe('end to end: the usage limit', () => {
  const startSystem = systemPerTest();

  it('a 429 with the unified rate-limit headers: one notice, every message kept and answered after the reset, none sent again', async () => {
    let resetsAt: number | undefined;
    /** 429 until the reset (set 8 s after the first request), then an answer naming the words it was asked. */
    const choose = (ctx: TurnContext): Step => {
      resetsAt ??= Math.floor(Date.now() / 1000) + 8;
      if (Date.now() / 1000 < resetsAt) return usageLimited(resetsAt);
      const asked = WORDS.filter((w) => ctx.userText.includes(`${w} question`));
      return say(`Answered: ${asked.join(', ') || 'nothing'}.`);
    };
    const system = await startSystem({ rules: [], login: 'subscription' });
    system.model.setScript({ rules: [], fallback: () => [choose], exhausted: choose });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');

    telegram.sendText(chatId, 'alpha question');
    telegram.sendText(chatId, 'bravo question');
    const notice = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes('usage limit reached')),
      { timeoutMs: 60_000 },
    );
    expect(notice.text).toMatch(/^⏳ usage limit reached — continuing at \d\d:\d\d \(UTC\)/);
    // Sent while the limit holds: kept, not sent into the same refusal.
    telegram.sendText(chatId, 'charlie question');
    const answered = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.startsWith('Answered:')),
      { timeoutMs: 60_000 },
    );
    expect(answered.text).toBe('Answered: alpha, bravo, charlie.');
    // The answer came from a request made after the reset, which held each message once.
    const after = system.model
      .messageRequests()
      .filter((r) => r.view?.kind === 'main' && r.answer?.type === 'reply');
    expect(after).toHaveLength(1);
    for (const word of WORDS) expect(after[0]?.view?.userText.split(`${word} question`).length, word).toBe(2);
    // Every refused request was made before the reset.
    const refused = system.model.messageRequests().filter((r) => r.answer?.type === 'error');
    expect(refused.length).toBeGreaterThan(0);
    // Said once; nothing else about the limit or a failure reached the chat.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const texts = botMessages(telegram, chatId).map((m) => m.text);
    expect(texts.filter((t) => /limit/i.test(t))).toEqual([notice.text]);
    expect(texts.filter((t) => /failed|try again|⚠️/i.test(t))).toEqual([]);
    expect(texts.filter((t) => t.startsWith('Answered:'))).toHaveLength(1);
  });
});
