/**
 * The start-up grace (`core/turns/arrival.ts`): a message that arrives while the bridge is still connecting
 * waits silently and then takes the normal path; only a wait longer than the grace shows it waiting
 * (👀), and never with a message of its own. The decision itself is a table; the wiring is tried
 * against the stand-in Telegram.
 */
import { describe, expect, it } from 'vitest';
import { type ArrivalView, arrival } from '../src/core/turns/arrival.js';
import { botMessages, connectBridge, framesOf, sleep, startTurn, startWorld, waitUntil } from './harness.js';

const base: ArrivalView = {
  bridgeConnected: true,
  waitedMs: 0,
  graceMs: 3000,
  laneBusy: false,
  openedTurn: false,
  drafts: true,
};

describe('arrival', () => {
  it.each<[string, Partial<ArrivalView>, ReturnType<typeof arrival>]>([
    ['a private chat, bridge up: a Thinking… draft', {}, { kind: 'draft', thinking: true }],
    [
      'a group, bridge up: no placeholder, its turn says ✍',
      { drafts: false },
      { kind: 'react', waiting: false },
    ],
    ['a turn running: 👀', { laneBusy: true }, { kind: 'react', waiting: true }],
    [
      'bridge connecting, just arrived: wait out the grace',
      { bridgeConnected: false },
      { kind: 'wait', ms: 3000 },
    ],
    [
      'bridge connecting, 1 s in: wait the rest',
      { bridgeConnected: false, waitedMs: 1000 },
      { kind: 'wait', ms: 2000 },
    ],
    [
      'bridge still away after the grace: 👀',
      { bridgeConnected: false, waitedMs: 3000 },
      { kind: 'react', waiting: true },
    ],
    // The bridge connected during the wait and opened a turn with this very message.
    [
      'its turn opened while it waited (private)',
      { openedTurn: true, laneBusy: true },
      { kind: 'draft', thinking: false },
    ],
    [
      'its turn opened while it waited (group)',
      { openedTurn: true, laneBusy: true, drafts: false },
      { kind: 'react', waiting: false },
    ],
  ])('%s', (_name, view, expected) => {
    expect(arrival({ ...base, ...view })).toEqual(expected);
  });
});

describe('a message in the first moment after start', () => {
  it('waits for a bridge that connects a moment later: no "agent restarting", a draft and one rich message', async () => {
    const world = await startWorld({ replies: 'rich', bridgeGraceMs: 3000 });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, 'hello at once');
    await sleep(150);
    const bridge = await connectBridge(world.socketPath);
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    await startTurn(bridge, { turnId: 't1', route: { chatId }, inboundIds: [frame.inboundId] });
    await tg.waitFor(() => tg.chat(chatId).drafts.find((d) => d.text === '' && d.canStop));
    await bridge.send({ type: 'text_delta', turnId: 't1', blockId: 'b1', delta: 'Hello back.' });
    await bridge.send({ type: 'text', turnId: 't1', blockId: 'b1', text: 'Hello back.' });
    await bridge.send({ type: 'turn_ended', turnId: 't1', outcome: 'success' });
    const [answer] = await tg.waitFor(() => {
      const mine = botMessages(tg, chatId);
      return mine.length > 0 ? mine : undefined;
    });
    await sleep(300);
    expect(botMessages(tg, chatId).map((m) => m.text)).toEqual(['Hello back.']);
    expect(answer).toMatchObject({ rich: true });
  });

  it('shows the message waiting (👀) once the wait is longer than the grace, with no message', async () => {
    const world = await startWorld({ replies: 'rich', bridgeGraceMs: 200 });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    const sentAt = Date.now();
    tg.sendText(chatId, 'hello, anyone?');
    const seen = await tg.waitFor(() => tg.messages(chatId).find((m) => m.reactions.includes('👀')));
    expect(seen.from).toBe('user');
    // Not before the grace ran out.
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(200);
    expect(botMessages(tg, chatId)).toEqual([]);
  });
});
