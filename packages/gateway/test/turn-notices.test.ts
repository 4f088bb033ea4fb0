/**
 * A running turn's API trouble in the chat: "⚠️ API 529 …" stayed in the chat and in `/status` after
 * the CLI's retry succeeded (issue 31). Now a turn has one notice, edited on each retry, taken out of
 * the chat and out of "Last error" when the turn succeeds, and kept beside a failure.
 */
import { describe, expect, it } from 'vitest';
import { isTurnNotice, noticeAfterEnd } from '../src/core/turns/turn-notice.js';
import {
  botMessage,
  botMessages,
  connectBridge,
  sleep,
  startTurn,
  startWorld,
  waitUntil,
} from './harness.js';

const retry = (chatId: number, turnId: string, attempt: number) =>
  ({
    type: 'operator_event',
    kind: 'overloaded',
    message: `API 529 (overloaded_error); retry ${attempt} of 10`,
    turnId,
    route: { chatId },
  }) as const;

describe('turn notices: the rule', () => {
  it.each([
    ['a retried API error of a turn', { kind: 'overloaded', turnId: 't', route: { chatId: 1 } }, true],
    ['a rate limit of a turn', { kind: 'rate_limit', turnId: 't', route: { chatId: 1 } }, true],
    ['an API error with no turn', { kind: 'api_error', route: { chatId: 1 } }, false],
    ['a failed login', { kind: 'auth', turnId: 't', route: { chatId: 1 } }, false],
    ['a crash loop', { kind: 'crash_loop', turnId: 't', route: { chatId: 1 } }, false],
  ] as const)('%s: %s', (_name, event, expected) => {
    expect(isTurnNotice({ type: 'operator_event', message: 'm', ...event })).toBe(expected);
  });

  it('takes the notice back only after a success', () => {
    expect([noticeAfterEnd('success'), noticeAfterEnd('error'), noticeAfterEnd('interrupted')]).toEqual([
      'remove',
      'keep',
      'keep',
    ]);
  });
});

describe('turn notices: the chat', () => {
  it("shows one notice for a turn's retries and takes it out of the chat and /status once it succeeds", async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await startTurn(bridge, { turnId: 't1', route: { chatId }, request: 'work' });
    await bridge.send(retry(chatId, 't1', 1));
    await botMessage(tg, chatId, (t) => t.includes('retry 1 of 10'));
    await bridge.send(retry(chatId, 't1', 2));
    await botMessage(tg, chatId, (t) => t.includes('retry 2 of 10'));
    expect(botMessages(tg, chatId).filter((m) => m.text.startsWith('⚠️'))).toHaveLength(1);
    await bridge.send({ type: 'turn_ended', turnId: 't1', outcome: 'success' });
    await waitUntil(() => (botMessages(tg, chatId).some((m) => m.text.startsWith('⚠️')) ? undefined : true));
    expect(world.gateway.status({ chatId }).lastError).toBeUndefined();
  });

  it('keeps the notice and the last error beside a failed turn', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await startTurn(bridge, { turnId: 't2', route: { chatId }, request: 'work' });
    await bridge.send(retry(chatId, 't2', 1));
    await botMessage(tg, chatId, (t) => t.includes('retry 1 of 10'));
    await bridge.send({ type: 'turn_ended', turnId: 't2', outcome: 'interrupted' });
    await sleep(300);
    expect(botMessages(tg, chatId).filter((m) => m.text.startsWith('⚠️'))).toHaveLength(1);
    expect(world.gateway.status({ chatId }).lastError).toContain('retry 1 of 10');
  });
});
