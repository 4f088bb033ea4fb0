/**
 * A background sub-agent outlives the turn that launched it: its card stays while it runs and hands it to
 * the next turn's card, and its `subagent_finished` (which names the launching turn, long ended) must
 * still reach whichever card holds it. The gateway used to drop sub-agent frames of a turn no longer
 * live, so every following card read "✅ Done · 1 sub-agent still running" and stayed pinned.
 */
import { expect, it } from 'vitest';
import {
  connectBridge,
  type FakeBridge,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';
import { CARD } from './pin-turns.js';

let world: World | undefined;
let bridge: FakeBridge | undefined;

/** A turn long enough for its card to show and pin, answering `text`. */
async function longTurn(b: FakeBridge, chatId: number, turnId: string, text: string): Promise<void> {
  await startTurn(b, { turnId, route: { chatId }, request: text });
  await sleep(700);
  await b.send({ type: 'text', turnId, blockId: `${turnId}-b`, text });
  await b.send({ type: 'turn_ended', turnId, outcome: 'success' });
}

it('a sub-agent that finishes after its turn ended leaves the card, which ends unpinned across the next two turns', async () => {
  world = await startWorld({ card: CARD });
  bridge = await connectBridge(world.socketPath);
  const { tg } = world;
  const chatId = tg.privateChat().id;

  await startTurn(bridge, { turnId: 't1', route: { chatId }, request: 'delegate' });
  await bridge.send({
    type: 'subagent_started',
    turnId: 't1',
    agentId: 'toolu_a1',
    agentType: 'general-purpose',
    description: 'List the files',
    prompt: 'list the files',
  });
  await sleep(700);
  await bridge.send({ type: 'text', turnId: 't1', blockId: 't1-b', text: 'working in the background' });
  await bridge.send({ type: 'turn_ended', turnId: 't1', outcome: 'success' });
  // The card of t1 stays pinned: its sub-agent still runs.
  await waitUntil(() => tg.chat(chatId).pinned.length === 1, 3000, 'the card pinned');

  // The next turn takes the running sub-agent over; then the sub-agent ends (named by t1).
  await startTurn(bridge, { turnId: 't2', route: { chatId }, request: 'next one' });
  await sleep(700);
  await bridge.send({ type: 'subagent_finished', turnId: 't1', agentId: 'toolu_a1', outcome: 'success' });
  await bridge.send({ type: 'text', turnId: 't2', blockId: 't2-b', text: 'next one' });
  await bridge.send({ type: 'turn_ended', turnId: 't2', outcome: 'success' });
  await longTurn(bridge, chatId, 't3', 'and another');

  await waitUntil(() => tg.chat(chatId).pinned.length === 0, 5000, 'every card unpinned');
  const cards = tg.messages(chatId).filter((m) => /Sub-agents/.test(m.text));
  expect(cards.length).toBeGreaterThan(0);
  for (const card of cards) expect(card.text).not.toMatch(/still running/);
  // The pin's record goes once the unpin is answered, a moment after the stand-in shows it gone.
  const shell = world;
  await waitUntil(() => shell.gateway.status().pins === 0, 5000, 'no pin recorded');
});
