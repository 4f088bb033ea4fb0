/**
 * The answer to a prompt and the prompt's `open → answered` move are one transaction: a crash (here,
 * the queueing step failing) can never leave a prompt marked answered whose answer frame was not queued —
 * the crash window prompts.ts used to have between `closePrompt` and the channel's append.
 */
import { type GatewayToBridge, silentLogger } from '@switchyard/protocol';
import type { CallbackQuery } from 'grammy/types';
import { afterEach, describe, expect, it } from 'vitest';
import { createBudget } from '../src/core/telegram/send-pacing.js';
import { encodePress } from '../src/io/prompts/keyboards.js';
import { createPrompts, UNDELIVERED } from '../src/io/prompts/prompts.js';
import { createCourier } from '../src/io/telegram/courier.js';
import { type GatewayStore, openGatewayStore } from '../src/store/store.js';

let store: GatewayStore | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
});

const chatId = 42;

/** A prompt handler over an in-memory store; `send` decides what queueing an answer does. */
function setUp(send: (frame: GatewayToBridge) => Promise<void>) {
  const s = openGatewayStore(':memory:');
  store = s;
  const answers: (string | undefined)[] = [];
  const api = {
    sendMessage: async () => ({ message_id: 7 }),
    editMessageText: async () => true,
    editMessageReplyMarkup: async () => true,
    answerCallbackQuery: async (_id: string, other?: { text?: string }) => {
      answers.push(other?.text);
      return true;
    },
  };
  const prompts = createPrompts({
    api: api as never,
    journal: { send: api.sendMessage as never },
    courier: createCourier(createBudget({ globalPerSecond: 1000 })),
    store: s,
    logger: silentLogger,
    send,
  });
  prompts.frame({
    type: 'permission_request',
    requestId: 'r1',
    route: { chatId },
    toolName: 'Bash',
    summary: 'ls',
    input: { command: 'ls' },
    suggestions: [],
  });
  const token = s.getPromptByRequest('r1')?.token ?? '';
  const press = (n: number): CallbackQuery => ({
    id: `cb${n}`,
    from: { id: 1, is_bot: false, first_name: 'u' },
    chat_instance: 'c',
    message: { message_id: 7, date: 0, chat: { id: chatId, type: 'private', first_name: 'u' } },
    data: encodePress({ kind: 'permission', token, decision: 'allow' }),
  });
  return { s, prompts, answers, token, press };
}

describe('answering a prompt', () => {
  it('rolls the prompt back to open when the answer could not be queued, so a second press answers it', async () => {
    let fail = true;
    // Like the channel's `send`: the append is synchronous, the socket write is the promise.
    const { s, prompts, answers, token, press } = setUp((frame) => {
      // What a crash between the two steps looks like from inside the transaction: the append
      // happened, then the process "died" before the transaction could commit.
      store?.channel.append(frame as never);
      if (fail) throw new Error('killed between marking the prompt and queueing its answer');
      return Promise.resolve();
    });
    await prompts.press(press(1));
    expect(answers).toEqual([UNDELIVERED]);
    expect(s.getPromptByToken(token)?.state).toBe('open');
    expect(s.channel.pendingAfter(0)).toHaveLength(0); // neither half of the transaction survived

    fail = false;
    await prompts.press(press(2));
    expect(answers[1]).toBe('Allowed');
    expect(s.getPromptByToken(token)?.state).toBe('answered');
    expect(s.channel.pendingAfter(0).map((p) => p.frame.type)).toEqual(['permission_answer']);

    // A third press: expired, and still exactly one answer queued.
    await prompts.press(press(3));
    expect(answers[2]).toBe('This request has expired.');
    expect(s.channel.pendingAfter(0)).toHaveLength(1);
  });
});
