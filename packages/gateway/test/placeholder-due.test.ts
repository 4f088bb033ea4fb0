/**
 * A placeholder's edit ("✓ taken", "✓ read together…", "✗ not read") is owed until Telegram confirms it:
 * an edit Telegram refused, or one a stopped gateway never made, is made by the next sweep — never a
 * "⏳ will be read" left beside a message the agent read.
 */
import { describe, expect, it } from 'vitest';
import { PLACEHOLDER } from '../src/index.js';
import { connectBridge, type FakeBridge, framesOf, startTurn, startWorld, waitUntil } from './harness.js';

/** A turn is running in a private chat and a second message came in as a steer; returns its ids. */
async function steerDuringTurn(
  world: Awaited<ReturnType<typeof startWorld>>,
  bridge: FakeBridge,
): Promise<{ chatId: number; inboundId: string; placeholderId: number }> {
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
  const ph = await tg.waitFor(() =>
    tg.messages(chatId).find((m) => m.replyToMessageId === steer.messageId && m.text === PLACEHOLDER.steer),
  );
  return { chatId, inboundId: frame.inboundId, placeholderId: ph.messageId };
}

/** Telegram refuses the next edit in the chat; the bridge then reports the steer taken. */
async function takenWithRefusedEdit(
  world: Awaited<ReturnType<typeof startWorld>>,
  bridge: FakeBridge,
  chatId: number,
  inboundId: string,
): Promise<void> {
  world.tg.failNext(
    'editMessageText',
    { errorCode: 400, description: 'Bad Request: an odd refusal' },
    { chatId },
  );
  await bridge.send({ type: 'message_taken', turnId: 't', inboundIds: [inboundId] });
  await waitUntil(
    () => world.logger.lines.find((l) => l.fields.event === 'placeholder_edit_failed'),
    3000,
    'the refused edit',
  );
}

describe('placeholder edits are owed until Telegram confirms them', () => {
  it('makes a refused "taken" edit again at the next sweep', async () => {
    const world = await startWorld({ placeholderRetryMs: 200 });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const { chatId, inboundId, placeholderId } = await steerDuringTurn(world, bridge);
    await takenWithRefusedEdit(world, bridge, chatId, inboundId);
    await tg.waitFor(() => tg.message(chatId, placeholderId)?.text === PLACEHOLDER.taken || undefined, {
      timeoutMs: 3000,
    });
    expect(tg.faultsInjected().fail).toBe(1);
  });

  it('makes an edit the stopped gateway never got through at its next start', async () => {
    // No sweep while running (an hour), so only the start's sweep can make the edit.
    const world = await startWorld({ placeholderRetryMs: 3_600_000 });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const { chatId, inboundId, placeholderId } = await steerDuringTurn(world, bridge);
    await takenWithRefusedEdit(world, bridge, chatId, inboundId);
    expect(tg.message(chatId, placeholderId)?.text).toBe(PLACEHOLDER.steer);
    await world.restart();
    await tg.waitFor(() => tg.message(chatId, placeholderId)?.text === PLACEHOLDER.taken || undefined, {
      timeoutMs: 3000,
    });
  });

  it('leaves a placeholder that became the reply to the reply, even with an edit owed before', async () => {
    const world = await startWorld({ placeholderRetryMs: 100 });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const { chatId, inboundId, placeholderId } = await steerDuringTurn(world, bridge);
    // No model call read the steer: at the turn's end it opens the next turn, and its placeholder grows
    // into that turn's reply. The "…" edit is refused; the reply's own edits replace it all the same.
    tg.failNext(
      'editMessageText',
      { errorCode: 400, description: 'Bad Request: an odd refusal' },
      { chatId },
    );
    await bridge.send({ type: 'turn_ended', turnId: 't', outcome: 'success' });
    await startTurn(bridge, { turnId: 't2', route: { chatId }, inboundIds: [inboundId] });
    await bridge.send({ type: 'message_taken', turnId: 't2', inboundIds: [inboundId] });
    await bridge.send({ type: 'text', turnId: 't2', blockId: 'b', text: 'the answer' });
    await bridge.send({ type: 'turn_ended', turnId: 't2', outcome: 'success' });
    // The chat's send budget paces the edits: several seconds for this many.
    await tg.waitFor(() => tg.message(chatId, placeholderId)?.text === 'the answer' || undefined, {
      timeoutMs: 10_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 500)); // several sweeps
    expect(tg.message(chatId, placeholderId)?.text).toBe('the answer');
    expect(tg.faultsInjected().fail).toBe(1);
  });
});
