/**
 * A message's state is shown until Telegram confirms it: a reaction Telegram refused for a while is
 * tried again, and a marker message's edit ("✓ taken", "✗ not read", one left by a previous version of
 * the gateway) is owed in the store until confirmed, so the next sweep makes it — never a "⏳ will be
 * read" or a ✍ left beside a message the agent read.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openGatewayStore, PLACEHOLDER } from '../src/index.js';
import { connectBridge, type FakeBridge, framesOf, startTurn, startWorld, waitUntil } from './harness.js';

/** A turn is running in a private chat and a second message came in as a steer; returns its ids. */
async function steerDuringTurn(
  world: Awaited<ReturnType<typeof startWorld>>,
  bridge: FakeBridge,
): Promise<{ chatId: number; inboundId: string; messageId: number }> {
  const { tg } = world;
  const chatId = tg.privateChat().id;
  tg.sendText(chatId, 'start');
  const first = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
  await startTurn(bridge, {
    turnId: 't',
    route: { chatId },
    request: 'start',
    inboundIds: [first.inboundId],
  });
  await waitUntil(() => world.gateway.status().runningTurns.length === 1 || undefined, 3000, 'turn running');
  const steer = tg.sendText(chatId, 'also this');
  const frame = await waitUntil(() => framesOf(bridge, 'user_message').find((f) => f.text === 'also this'));
  await tg.waitFor(() => tg.message(chatId, steer.messageId)?.reactions.includes('👀') || undefined);
  return { chatId, inboundId: frame.inboundId, messageId: steer.messageId };
}

/** Telegram refuses the next reaction in the chat; the bridge then reports the steer taken. */
async function takenWithRefusedReaction(
  world: Awaited<ReturnType<typeof startWorld>>,
  bridge: FakeBridge,
  chatId: number,
  inboundId: string,
): Promise<void> {
  world.tg.failNext(
    'setMessageReaction',
    { errorCode: 400, description: 'Bad Request: an odd refusal' },
    { chatId },
  );
  await bridge.send({ type: 'message_taken', turnId: 't', inboundIds: [inboundId] });
  await waitUntil(
    () => world.logger.lines.find((l) => l.fields.event === 'reaction_failed'),
    3000,
    'the refused reaction',
  );
}

describe('a message’s state is shown until Telegram confirms it', () => {
  it('makes a refused ✍ reaction again after the retry interval', async () => {
    const world = await startWorld({ placeholderRetryMs: 200 });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const { chatId, inboundId, messageId } = await steerDuringTurn(world, bridge);
    await takenWithRefusedReaction(world, bridge, chatId, inboundId);
    expect(tg.message(chatId, messageId)?.reactions).toEqual(['👀']);
    await tg.waitFor(() => tg.message(chatId, messageId)?.reactions.includes('✍') || undefined, {
      timeoutMs: 3000,
    });
    expect(tg.faultsInjected().fail).toBe(1);
  });

  it('makes a marker edit the stopped gateway never got through at its next start', async () => {
    // No sweep while running (an hour), so only the start's sweep can make the edit.
    const world = await startWorld({ placeholderRetryMs: 3_600_000 });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const { chatId, inboundId } = await steerDuringTurn(world, bridge);
    await world.gateway.stop();
    // What a previous version left: a "will be read" marker message, its "taken" edit owed.
    const api = `${tg.apiRoot}/bot${tg.token}/sendMessage`;
    const sent = (await (
      await fetch(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: chatId, text: PLACEHOLDER.steer }),
      })
    ).json()) as { result: { message_id: number } };
    const markerId = sent.result.message_id;
    const store = openGatewayStore(join(world.stateDir, 'gateway.sqlite'));
    store.setPlaceholder(inboundId, markerId, 'steer');
    store.placeholderDue(inboundId, 'taken', PLACEHOLDER.taken);
    store.close();
    await world.gateway.start();
    await tg.waitFor(() => tg.message(chatId, markerId)?.text === PLACEHOLDER.taken || undefined, {
      timeoutMs: 3000,
    });
  });

  it('a steer that opens the next turn ends 👌 beside its answer, even with a reaction refused before', async () => {
    const world = await startWorld({ placeholderRetryMs: 100 });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const { chatId, inboundId, messageId } = await steerDuringTurn(world, bridge);
    // No model call read the steer: at the turn's end it opens the next turn. Its ✍ is refused once;
    // the retry and then the final 👌 come all the same.
    tg.failNext(
      'setMessageReaction',
      { errorCode: 400, description: 'Bad Request: an odd refusal' },
      { chatId },
    );
    await bridge.send({ type: 'turn_ended', turnId: 't', outcome: 'success' });
    await startTurn(bridge, { turnId: 't2', route: { chatId }, inboundIds: [inboundId] });
    await bridge.send({ type: 'message_taken', turnId: 't2', inboundIds: [inboundId] });
    await bridge.send({ type: 'text', turnId: 't2', blockId: 'b', text: 'the answer' });
    await bridge.send({ type: 'turn_ended', turnId: 't2', outcome: 'success' });
    await tg.waitFor(() => tg.messages(chatId).find((m) => m.from === 'bot' && m.text === 'the answer'), {
      timeoutMs: 10_000,
    });
    await tg.waitFor(() => tg.message(chatId, messageId)?.reactions.includes('👌') || undefined, {
      timeoutMs: 3000,
    });
    await new Promise((resolve) => setTimeout(resolve, 500)); // several retry intervals
    expect(tg.message(chatId, messageId)?.reactions).toEqual(['👌']);
    expect(tg.messages(chatId).filter((m) => m.from === 'bot' && m.text === 'the answer')).toHaveLength(1);
    expect(tg.faultsInjected().fail).toBe(1);
  });
});
