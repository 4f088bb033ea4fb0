/**
 * The bridge restarting and the gateway dying: messages sent while the bridge is away are told they
 * are queued and delivered in order when it is back; a `kill -9` of the gateway mid-turn loses nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PLACEHOLDER } from '../src/index.js';
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
    await tg.waitFor(
      () =>
        tg.messages(chatId).filter((m) => m.from === 'bot' && m.text === PLACEHOLDER.queued).length === 3 ||
        undefined,
      { timeoutMs: 8000 },
    );
    expect(world.gateway.status().inbox).toBe(3);
    bridge = await connectBridge(world.socketPath);
    await waitUntil(() => bridge && userTexts(bridge).length === 3, 5000, 'delivery');
    expect(userTexts(bridge)).toEqual(['one', 'two', 'three']);
    await waitUntil(() => world?.gateway.status().inbox === 0, 3000, 'acked');
  });

  it('shows a steer as taken', async () => {
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
    const ph = await tg.waitFor(() =>
      tg.messages(chatId).find((m) => m.replyToMessageId === steer.messageId),
    );
    expect(ph.text).toBe(PLACEHOLDER.steer);
    await bridge.send({ type: 'message_taken', turnId: 't', inboundIds: [steerFrame.inboundId] });
    await tg.waitFor(() => tg.message(chatId, ph.messageId)?.text === PLACEHOLDER.taken || undefined, {
      timeoutMs: 5000,
    });
  });

  it('survives kill -9 of the gateway mid-turn: the queued message is delivered and the reply finished', async () => {
    world = await startWorld();
    await world.gateway.stop(); // the child process plays the gateway from here on
    const { tg } = world;
    const entry = fileURLToPath(new URL('./gateway-entry.mjs', import.meta.url));
    const spawnGateway = () =>
      spawn(process.execPath, [entry], {
        env: { ...process.env, GW_OPTIONS: JSON.stringify({ ...world?.options, logger: undefined }) },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    child = spawnGateway();
    bridge = await connectBridge(world.socketPath);
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, 'before the crash');
    const first = await waitUntil(() => bridge?.received.find((f) => f.type === 'user_message'), 8000);
    if (first.type !== 'user_message') throw new Error('unreachable');
    await startTurn(bridge, { turnId: 'k9', route: { chatId }, request: 'x', inboundIds: [first.inboundId] });
    await bridge.send({ type: 'text', turnId: 'k9', blockId: 'b1', text: 'Part one.' });
    await sleep(300);
    child.kill('SIGKILL');
    await new Promise((resolve) => child?.once('exit', resolve));
    // While the gateway is dead: a new message arrives, and the turn goes on.
    tg.sendText(chatId, 'during the crash');
    await bridge.send({ type: 'text', turnId: 'k9', blockId: 'b2', text: 'Part **two**.' });
    await bridge.send({ type: 'turn_ended', turnId: 'k9', outcome: 'success' });
    child = spawnGateway();
    await waitUntil(() => bridge && userTexts(bridge).includes('during the crash'), 15_000, 'redelivery');
    const reply = await tg.waitFor(
      () => tg.messages(chatId).find((m) => m.from === 'bot' && m.html.includes('<b>two</b>')),
      { timeoutMs: 10_000 },
    );
    expect(reply.text).toBe('Part one.\n\nPart two.');
    expect(userTexts(bridge).filter((t) => t === 'before the crash')).toHaveLength(1);
  }, 40_000);
});
