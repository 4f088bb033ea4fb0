/**
 * A chat that refuses the bot's reactions (`available_reactions`, `REACTION_INVALID`) against the
 * stand-in Telegram: its messages' states go to ONE marker message per run of messages, sent once and
 * edited in place — never one message per message — and a chat that takes reactions never gets one.
 */
import { describe, expect, it } from 'vitest';
import { botMessages, connectBridge, framesOf, startTurn, startWorld, waitUntil } from './harness.js';

const BOT = '@switchyard_sandbox_bot';

describe('reactions refused', () => {
  it('a burst during a turn in a group without reactions: one marker, edited to "👌 read", beside one answer', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const group = tg.createGroup({ title: 'no reactions', supergroup: true, availableReactions: [] });
    const route = { chatId: group.id };
    tg.sendText(group.id, `${BOT} first`);
    const first = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    await startTurn(bridge, { turnId: 't', route, inboundIds: [first.inboundId] });
    for (const text of ['second', 'third', 'fourth']) tg.sendText(group.id, `${BOT} ${text}`);
    const frames = await waitUntil(() => {
      const all = framesOf(bridge, 'user_message');
      return all.length === 4 ? all : undefined;
    });
    await tg.waitFor(() => botMessages(tg, group.id).find((m) => m.text.includes('waiting: 3 messages')));
    await bridge.send({
      type: 'message_taken',
      turnId: 't',
      inboundIds: frames.slice(1).map((f) => f.inboundId),
    });
    await bridge.send({ type: 'text', turnId: 't', blockId: 'b', text: 'one answer for all four' });
    await bridge.send({ type: 'turn_ended', turnId: 't', outcome: 'success' });
    // The marker lists what the turn read: the three that waited, and the one that opened it.
    const marker = await tg.waitFor(() =>
      botMessages(tg, group.id).find((m) => m.text === '👌 read: 4 messages'),
    );
    await tg.waitFor(() => botMessages(tg, group.id).find((m) => m.text === 'one answer for all four'));
    // Two bot messages in all: the marker (edited in place) and the answer.
    expect(botMessages(tg, group.id)).toHaveLength(2);
    expect(marker.history.length).toBeGreaterThanOrEqual(2);
    expect(tg.messages(group.id).every((m) => m.reactions.length === 0)).toBe(true);
    expect(world.logger.lines.filter((l) => l.fields.event === 'reactions_refused')).toHaveLength(1);
    expect(tg.stats().tooManyRequests).toBe(0);
  });

  it('a chat that takes reactions gets no marker message at all', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, 'first');
    const first = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    await startTurn(bridge, { turnId: 't', route: { chatId }, inboundIds: [first.inboundId] });
    tg.sendText(chatId, 'second');
    const second = await waitUntil(() => framesOf(bridge, 'user_message')[1]);
    await bridge.send({ type: 'message_taken', turnId: 't', inboundIds: [second.inboundId] });
    await bridge.send({ type: 'text', turnId: 't', blockId: 'b', text: 'the answer' });
    await bridge.send({ type: 'turn_ended', turnId: 't', outcome: 'success' });
    await tg.waitFor(
      () =>
        tg.messages(chatId).filter((m) => m.from === 'user' && m.reactions.includes('👌')).length === 2 ||
        undefined,
    );
    expect(botMessages(tg, chatId).map((m) => m.text)).toEqual(['the answer']);
  });
});
