/**
 * The pin invariants in groups and forums (T1, T10; no completion notice beside a done card) and a card
 * closed ahead of queued replies; the rest of the spec's matrix is in `pins.test.ts`. A group gets 20
 * messages a minute: these wait.
 */
import { describe, expect, it } from 'vitest';
import { connectBridge, introduce, sleep, startTurn, startWorld, waitUntil } from './harness.js';
import { CARD, pinEvents, turn } from './pin-turns.js';

describe.concurrent('pinned progress card in groups', () => {
  it('T1/I10/F6: a refused pin (no rights in a group) rolls back its record and the card lives on unpinned', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({ card: CARD }, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const group = tg.createGroup({ title: 'g', supergroup: true, botCanPin: false });
    await introduce(world, bridge, group.id);
    const running = turn(bridge, group.id, 't1', 1200);
    // The introduction's placeholder spent the group's budget (one message per 3.1 s): the card waits.
    await waitUntil(() => pinEvents(world).length > 0, 10_000, 'pin attempt');
    expect(pinEvents(world)[0]?.fields).toMatchObject({ event: 'pin', outcome: 'forbidden' });
    expect(world.gateway.status().pins).toBe(0);
    await running;
    // Groups refill one message per 3.1 s, so the final card edit takes a few seconds to arrive.
    await waitUntil(
      () => tg.messages(group.id).find((m) => m.from === 'bot' && m.text.includes('Done')),
      12_000,
      'card done',
    );
    expect(tg.calls('unpinChatMessage')).toHaveLength(0);
  }, 20_000);

  it('closes a finished card (final edit, unpin) right after the replies queued in its chat, never before them', async ({
    onTestFinished,
  }) => {
    // The order (`io/telegram/courier.ts`): content — replies, answers — goes before cosmetics, and a closing
    // card is the first of the cosmetics. Replies are paced as windows, so the backlog drains in one burst
    // and the card is unpinned right after it.
    const world = await startWorld({ card: CARD }, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await startTurn(bridge, { turnId: 'c', route: { chatId } });
    await tg.waitFor(() => tg.chat(chatId).pinned[0], { timeoutMs: 3000 });
    const help = () =>
      tg.messages(chatId).filter((m) => m.from === 'bot' && m.text.includes('Claude Code agent'));
    for (let i = 0; i < 5; i++) tg.sendText(chatId, '/help');
    await waitUntil(() => help().length >= 1, 5000, 'the first /help reply');
    await bridge.send({ type: 'turn_ended', turnId: 'c', outcome: 'success' });
    await waitUntil(() => help().length === 5 && tg.chat(chatId).pinned.length === 0, 12_000, 'drained');
    const unpin = tg.calls('unpinChatMessage').find((c) => c.ok);
    expect(unpin).toBeDefined();
    const before = help().filter((m) => m.date < (unpin?.at ?? 0)).length;
    // Every reply queued before the turn ended went first; none waited for the card.
    expect(before).toBe(5);
    expect(tg.stats().tooManyRequests).toBe(0);
  }, 20_000);

  it('T10: the read-only audit finds no orphan pins on a clean chat; a topic turn ends with its card edited to Done, no extra message', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({ card: CARD }, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const forum = tg.createGroup({
      title: 'f',
      supergroup: true,
      forum: true,
      botCanPin: true,
      topics: ['work'],
    });
    const threadId = forum.topics[0]?.threadId as number;
    await introduce(world, bridge, forum.id);
    const dm = tg.privateChat().id;
    await Promise.all([turn(bridge, forum.id, 'f1', 900, threadId), turn(bridge, dm, 'd1', 900)]);
    const done = (chatId: number) => tg.messages(chatId).filter((m) => m.text.startsWith('✅ Done'));
    await waitUntil(() => done(forum.id).length > 0, 15_000, 'topic card done');
    // A notice would follow the card's close within about a second (the group's send budget): give it 3.
    await sleep(3000);
    // The one "✅ Done" in the topic is the card, edited from "⚙️ Working"; nothing was sent after it.
    expect(done(forum.id)).toHaveLength(1);
    expect(done(forum.id)[0]?.history.length).toBeGreaterThan(1);
    expect(tg.messages(forum.id).some((m) => m.text === '✅ Done')).toBe(false);
    expect(world.gateway.sweep).toEqual({ recorded: 0, botAuthored: 0 });
  }, 25_000);
});
