/**
 * `kill -9` of the gateway (a real child process, `gateway-entry.mjs`) mid-turn: the message that came in
 * while it was dead is delivered, and the reply is finished once, from SQLite.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectBridge,
  type FakeBridge,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from '../../packages/gateway/test/harness.js';

let world: World | undefined;
let bridge: FakeBridge | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
});

const userTexts = (b: FakeBridge) => b.received.flatMap((f) => (f.type === 'user_message' ? [f.text] : []));

describe('gateway killed', () => {
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
