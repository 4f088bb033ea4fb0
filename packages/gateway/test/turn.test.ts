import { describe, expect, it } from 'vitest';
import {
  connectBridge,
  type FakeBridge,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';

let world: World | undefined;
let bridge: FakeBridge | undefined;

describe('a turn', () => {
  it('goes from a user message to its reaction, the first text as a message, streamed edits and the final HTML', async () => {
    world = await startWorld();
    bridge = await connectBridge(world.socketPath);
    const { tg, userId } = world;
    const chatId = tg.privateChat().id;
    const userMsg = tg.sendText(chatId, 'hello agent');

    const frame = await waitUntil(() => bridge?.received.find((f) => f.type === 'user_message'));
    expect(frame).toMatchObject({
      type: 'user_message',
      text: 'hello agent',
      route: { chatId },
      sender: { id: userId },
    });
    const inboundId = frame.type === 'user_message' ? frame.inboundId : '';
    await startTurn(bridge, {
      turnId: 't1',
      route: { chatId },
      request: 'hello agent',
      inboundIds: [inboundId],
    });
    // Its turn reads it: ✍ on it, and no placeholder message.
    await tg.waitFor(() => tg.message(chatId, userMsg.messageId)?.reactions.includes('✍') || undefined);
    expect(tg.messages(chatId).filter((m) => m.from === 'bot')).toEqual([]);
    for (const word of ['Hello', ' **there**', ', friend', '.']) {
      await bridge.send({ type: 'text_delta', turnId: 't1', blockId: 'b1', delta: word });
      await sleep(700);
    }
    const placeholder = await tg.waitFor(() => tg.messages(chatId).find((m) => m.from === 'bot'));
    expect(placeholder.history[0]?.text.startsWith('Hello')).toBe(true);
    await bridge.send({ type: 'text', turnId: 't1', blockId: 'b1', text: 'Hello **there**, friend.' });
    await bridge.send({ type: 'turn_ended', turnId: 't1', outcome: 'success' });

    const final = await tg.waitFor(
      () => {
        const m = tg.message(chatId, placeholder.messageId);
        return m?.html.includes('<b>there</b>') ? m : undefined;
      },
      { timeoutMs: 8000 },
    );
    expect(final.text).toBe('Hello there, friend.');
    // The live stream edited the placeholder at least once before the final render.
    expect(final.history.length).toBeGreaterThanOrEqual(3);
    expect(final.history.some((v) => v.text.startsWith('Hello'))).toBe(true);
    // Nothing doubled: the reply is its first message, edited; the message it answers is read.
    expect(tg.messages(chatId).filter((m) => m.from === 'bot')).toHaveLength(1);
    await tg.waitFor(() => tg.message(chatId, userMsg.messageId)?.reactions.includes('👌') || undefined);
    expect(tg.stats().tooManyRequests).toBe(0);
    // The bridge acknowledged the message, so it left the inbox.
    await waitUntil(() => world?.gateway.status().inbox === 0);
  });
});
