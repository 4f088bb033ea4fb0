/**
 * The bridge restarting and the gateway dying: messages sent while the bridge is away are told they
 * are queued and delivered in order when it is back; a `kill -9` of the gateway mid-turn loses nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
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
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
});

const userTexts = (b: FakeBridge) => b.received.flatMap((f) => (f.type === 'user_message' ? [f.text] : []));

describe('restarts', () => {
  it('queues messages while the bridge is down and delivers them in order when it is back', async () => {
    world = await startWorld();
    const { tg } = world;
    const chatId = tg.privateChat().id;
    for (const text of ['one', 'two', 'three']) tg.sendText(chatId, text);
    // Each waits, 👀 (no "queued" message of its own).
    await tg.waitFor(
      () =>
        tg.messages(chatId).filter((m) => m.from === 'user' && m.reactions.includes('👀')).length === 3 ||
        undefined,
      { timeoutMs: 8000 },
    );
    expect(tg.messages(chatId).filter((m) => m.from === 'bot')).toEqual([]);
    expect(world.gateway.status().inbox).toBe(3);
    bridge = await connectBridge(world.socketPath);
    await waitUntil(() => bridge && userTexts(bridge).length === 3, 5000, 'delivery');
    expect(userTexts(bridge)).toEqual(['one', 'two', 'three']);
    await waitUntil(() => world?.gateway.status().inbox === 0, 3000, 'acked');
  });

  it('shows a steer waiting (👀), then taken (✍)', async () => {
    world = await startWorld();
    bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, 'start');
    const first = await waitUntil(() => bridge?.received.find((f) => f.type === 'user_message'));
    if (first.type !== 'user_message') throw new Error('unreachable');
    await startTurn(bridge, {
      turnId: 't',
      route: { chatId },
      request: 'start',
      inboundIds: [first.inboundId],
    });
    await sleep(100);
    const steer = tg.sendText(chatId, 'also this');
    const steerFrame = await waitUntil(() =>
      bridge?.received.find((f) => f.type === 'user_message' && f.text === 'also this'),
    );
    if (steerFrame.type !== 'user_message') throw new Error('unreachable');
    await tg.waitFor(() => tg.message(chatId, steer.messageId)?.reactions.includes('👀') || undefined);
    await bridge.send({ type: 'message_taken', turnId: 't', inboundIds: [steerFrame.inboundId] });
    await tg.waitFor(() => tg.message(chatId, steer.messageId)?.reactions.includes('✍') || undefined, {
      timeoutMs: 5000,
    });
    expect(tg.messages(chatId).filter((m) => m.replyToMessageId === steer.messageId)).toEqual([]);
  });
});
