/**
 * The usage limit as the chat sees it (`core/usage-limit.ts`): one notice per wait naming the time the
 * work goes on in the agent's time zone, and the state `/status` shows until the bridge says it goes on.
 */
import { describe, expect, it } from 'vitest';
import { statusText } from '../../src/core/commands/command-texts.js';
import { createUsageLimits, resetTimeText } from '../../src/core/turns/usage-limit.js';

const route = { chatId: 7 };
const at = Date.UTC(2026, 11, 2, 5, 37);
const frame = (state: 'limited' | 'resumed', resetsAt = at) =>
  ({ type: 'usage_limit', route, turnId: 't1', state, resetsAt }) as const;

describe('usage limits', () => {
  it.each([
    ['UTC', '05:37 (UTC)'],
    ['Europe/Berlin', '06:37 (Europe/Berlin)'],
    ['America/New_York', '00:37 (America/New_York)'],
  ])('the reset time in %s reads %s', (zone, text) => {
    expect(resetTimeText(at, zone)).toBe(text);
  });

  it('one notice per wait: said again for the same wait (a later reset, a resent frame), nothing', () => {
    const limits = createUsageLimits('Europe/Berlin');
    expect(limits.frame(frame('limited'))).toEqual({
      route,
      text: '⏳ usage limit reached — continuing at 06:37 (Europe/Berlin). Your messages are kept and answered then.',
    });
    expect(limits.frame(frame('limited'))).toBeUndefined();
    expect(limits.frame(frame('limited', at + 60_000))).toBeUndefined();
    expect(limits.until(route)).toBe(at + 60_000);
    expect(limits.until({ chatId: 7, threadId: 3 })).toBeUndefined();
    expect(limits.frame(frame('resumed'))).toBeUndefined();
    expect(limits.until(route)).toBeUndefined();
    // A new wait is a new notice.
    expect(limits.frame(frame('limited'))?.text).toContain('06:37');
  });

  it('/status shows the limit while the conversation waits', () => {
    const facts = {
      bridgeConnected: true,
      agentState: 'limited',
      model: 'm',
      mode: 'default',
      runningTurns: [{ turnId: 't1' }],
      inbox: 0,
      openPrompts: 0,
      pins: 0,
      lastError: undefined,
      polling: { ok: true },
    };
    expect(statusText({ ...facts, usageLimitUntil: at, timeZone: 'UTC' })).toContain(
      'Usage limit: reached, continuing at 05:37 (UTC)',
    );
    expect(statusText(facts)).not.toContain('Usage limit');
  });
});
