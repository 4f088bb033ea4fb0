/**
 * The daily budget gate in a running gateway (sandbox Telegram, a fake bridge): once the turns of the day
 * cost the budget, the next message does not reach the bridge, its marker says why and the user is told
 * once; the next day (a clock moved a day on) it reaches the bridge again. `/status` shows today's cost.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type FrameOf, systemClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { signBody } from '../../src/io/automation/signature.js';
import { openGatewayStore } from '../../src/store/store.js';
import {
  connectBridge,
  type FakeBridge,
  framesOf,
  sleep,
  startWorld,
  type World,
  waitUntil,
} from '../harness.js';

const DAY_MS = 24 * 3600_000;

/** The bridge opens a turn with `opener` and ends it costing `usd`; resolves once the cost is recorded. */
async function costTurn(
  world: World,
  bridge: FakeBridge,
  opener: FrameOf<'user_message'>,
  turnId: string,
  usd: number,
): Promise<void> {
  const before = world.gateway.status().costToday?.agentUsd ?? 0;
  await bridge.send({
    type: 'turn_started',
    turnId,
    route: opener.route,
    inboundIds: [opener.inboundId],
    request: opener.text,
    startedAt: Date.now(),
  });
  await bridge.send({ type: 'text', turnId, blockId: 'b', text: 'done' });
  await bridge.send({ type: 'turn_ended', turnId, outcome: 'success', costUsd: usd });
  // Sums of cents in binary floating point: equal to a rounding's width.
  const recorded = () => Math.abs((world.gateway.status().costToday?.agentUsd ?? 0) - (before + usd)) < 1e-9;
  await waitUntil(recorded, 5000, 'cost recorded');
}

/** A first message whose turn costs $1.25, over the $1 budget of the tests' worlds. */
async function spendTheBudget(world: World, bridge: FakeBridge, chatId: number): Promise<void> {
  world.tg.sendText(chatId, 'first');
  const first = await waitUntil(() => framesOf(bridge, 'user_message')[0], 5000, 'first message');
  await costTurn(world, bridge, first, 't1', 1.25);
}

describe('daily budget gate', () => {
  it('the message after the budget is spent does not reach the bridge and the user is told, once; the next day it does', async () => {
    let shift = 0;
    const clock = { ...systemClock, now: () => Date.now() + shift };
    const world = await startWorld({ spend: { dailyUsd: 1 }, clock });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;

    await spendTheBudget(world, bridge, chatId);

    tg.sendText(chatId, 'second');
    const notice = await tg.waitFor(
      () =>
        tg.messages(chatId).find((m) => m.from === 'bot' && m.text.startsWith('The agent’s daily budget')),
      { timeoutMs: 5000 },
    );
    expect(notice.text).toContain('$1.25 spent today');
    expect(notice.text).toMatch(/resets at \d{4}-\d\d-\d\d 00:00 \(UTC\)/);
    await tg.waitFor(
      () => tg.messages(chatId).find((m) => m.from === 'bot' && m.text.includes('✗ Not read')),
      {
        timeoutMs: 5000,
      },
    );
    tg.sendText(chatId, 'third');
    await tg.waitFor(
      () =>
        tg.messages(chatId).filter((m) => m.from === 'bot' && m.text.includes('✗ Not read')).length === 2 ||
        undefined,
      { timeoutMs: 5000 },
    );
    await sleep(200);
    expect(framesOf(bridge, 'user_message').map((f) => f.text)).toEqual(['first']);
    expect(tg.messages(chatId).filter((m) => m.text.startsWith('The agent’s daily budget'))).toHaveLength(1);

    // A restart does not re-send the refused messages.
    await world.restart();
    await sleep(300);
    expect(framesOf(bridge, 'user_message').map((f) => f.text)).toEqual(['first']);

    shift = DAY_MS;
    tg.sendText(chatId, 'next day');
    await waitUntil(() => framesOf(bridge, 'user_message')[1], 5000, 'next day’s message');
    expect(framesOf(bridge, 'user_message').map((f) => f.text)).toEqual(['first', 'next day']);
    expect(world.gateway.status({ chatId }).costToday).toMatchObject({
      agentUsd: 0,
      conversationUsd: 0,
      dailyUsd: 1,
    });
  });

  it('ten topics written at once under a $1 budget: the turns that may start do, the rest wait, none runs past one estimate (issue 27)', async () => {
    const world = await startWorld({ spend: { dailyUsd: 1, turnEstimateUsd: 0.3 } });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const topics = Array.from({ length: 10 }, (_, i) => `t${i}`);
    const forum = tg.createGroup({ title: 'forum', supergroup: true, forum: true, topics });
    for (const [i, topic] of forum.topics.entries())
      tg.sendText(forum.id, `@switchyard_sandbox_bot question ${i}`, { threadId: topic.threadId });
    // $0, $0.30, $0.60 and $0.90 reserved as each was admitted: a fifth would start at $1.20.
    await waitUntil(() => framesOf(bridge, 'user_message')[3], 5000, 'four messages');
    await sleep(500);
    expect(framesOf(bridge, 'user_message')).toHaveLength(4);
    // The first turn ends cheap: a waiting one may start now ($0.05 spent + three reserved).
    const [first, second, third, fourth] = framesOf(bridge, 'user_message');
    if (!first || !second || !third || !fourth) throw new Error('four messages expected');
    await costTurn(world, bridge, first, 'x1', 0.05);
    await waitUntil(() => framesOf(bridge, 'user_message')[4], 5000, 'a waiting message let in');
    await sleep(300);
    expect(framesOf(bridge, 'user_message')).toHaveLength(5);
    // The rest cost the estimate: once the spending alone reached the budget, the waiting ones are refused.
    for (const [i, frame] of [second, third, fourth, framesOf(bridge, 'user_message')[4]].entries())
      if (frame) await costTurn(world, bridge, frame, `x${i + 2}`, 0.3);
    await sleep(500);
    const spent = world.gateway.status().costToday?.agentUsd ?? 0;
    expect(spent).toBeLessThanOrEqual(1 + 0.3);
    const passed = framesOf(bridge, 'user_message').length;
    const unread = tg.messages(forum.id).filter((m) => m.from === 'bot' && m.text.includes('✗ Not read'));
    expect(passed + unread.length).toBe(10);
    expect(passed).toBeLessThan(10);
    await world.close();
  });

  it('once the budget is used up, a typed answer is not taken and /compact is not sent (issue 27)', async () => {
    const world = await startWorld({ spend: { dailyUsd: 1 } });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await spendTheBudget(world, bridge, chatId);
    await bridge.send({
      type: 'question',
      requestId: 'q1',
      route: { chatId },
      questions: [{ question: 'Which database?', options: [{ label: 'Postgres' }], multiSelect: false }],
    });
    await tg.waitFor(
      () => tg.messages(chatId).find((m) => m.from === 'bot' && m.text.includes('Which database?')),
      {
        timeoutMs: 5000,
      },
    );
    // Typed, it would let the turn go on spending: it is a message like any other, and refused.
    tg.sendText(chatId, 'MySQL, and then rewrite everything');
    await tg.waitFor(
      () =>
        tg.messages(chatId).find((m) => m.from === 'bot' && m.text.startsWith('The agent’s daily budget')),
      { timeoutMs: 5000 },
    );
    tg.sendText(chatId, '/compact');
    await tg.waitFor(
      () =>
        tg
          .messages(chatId)
          .find((m) => m.from === 'bot' && m.text.startsWith('Not compacted: the agent’s daily budget')),
      { timeoutMs: 5000 },
    );
    await sleep(300);
    expect(framesOf(bridge, 'question_answer')).toEqual([]);
    expect(framesOf(bridge, 'compact')).toEqual([]);
    expect(framesOf(bridge, 'user_message').map((f) => f.text)).toEqual(['first']);
    await world.close();
  });

  it('in a rich private chat (drafts, no placeholders) each refused message still gets its "not read" marker', async () => {
    const world = await startWorld({ spend: { dailyUsd: 1 }, replies: 'rich' });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await spendTheBudget(world, bridge, chatId);

    const notRead = () =>
      tg.messages(chatId).filter((m) => m.from === 'bot' && m.text.includes('✗ Not read'));
    tg.sendText(chatId, 'second');
    await tg.waitFor(() => notRead().length === 1 || undefined, { timeoutMs: 5000 });
    // After the day's notice, a refused message is still answered: by its marker alone.
    tg.sendText(chatId, 'third');
    await tg.waitFor(() => notRead().length === 2 || undefined, { timeoutMs: 5000 });
    expect(notRead().map((m) => m.replyToMessageId)).toEqual(
      tg
        .messages(chatId)
        .filter((m) => m.from === 'user' && m.text !== 'first')
        .map((m) => m.messageId),
    );
    expect(framesOf(bridge, 'user_message').map((f) => f.text)).toEqual(['first']);
    await world.close();
  });

  it('a message left queued by a crash is not re-sent at boot once the budget is spent, and stays unread', async () => {
    const world = await startWorld({ spend: { dailyUsd: 1 } });
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    await world.gateway.stop();
    // What a gateway killed between the inbox write and the hand-over leaves: a queued row; and a turn
    // of today that cost the budget.
    const store = openGatewayStore(join(world.stateDir, 'gateway.sqlite'));
    store.spendStarted('t0', { chatId }, world.userId);
    store.spendEnded('t0', { chatId }, 1.5, Date.now());
    const frame = {
      type: 'user_message' as const,
      inboundId: 'queued-1',
      route: { chatId },
      telegramMessageId: 77,
      sender: { id: world.userId, name: 'Ada' },
      text: 'left queued',
      attachments: [],
      sentAt: Date.now(),
    };
    store.addInbound({ inboundId: 'queued-1', frame });
    store.close();
    world.gateway = createGateway(world.options);
    await world.gateway.start();
    await world.tg.waitFor(
      () =>
        world.tg
          .messages(chatId)
          .find((m) => m.from === 'bot' && m.text.startsWith('The agent’s daily budget')),
      { timeoutMs: 5000 },
    );
    await sleep(300);
    expect(framesOf(bridge, 'user_message')).toEqual([]);
    await world.gateway.stop();
    const after = openGatewayStore(join(world.stateDir, 'gateway.sqlite'));
    expect(after.getInbound('queued-1')?.state).toBe('unread');
    after.close();
    world.gateway = createGateway(world.options);
    await world.gateway.start();
  });

  it('a webhook run counts against the agent’s budget: accepted (202) but not handed to the bridge once it is spent', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const world = await startWorld({ spend: { dailyUsd: 1 } });
    const chatId = world.tg.privateChat().id;
    world.options.webhooks = {
      listen: { host: '127.0.0.1', port },
      hooks: [{ name: 'alerts', kind: 'generic', secret: 'k', route: { chatId } }],
    };
    await world.restart();
    const bridge = await connectBridge(world.socketPath);
    const send = (body: string) => {
      const at = Math.floor(Date.now() / 1000);
      return fetch(`http://127.0.0.1:${port}/hooks/alerts`, {
        method: 'POST',
        body,
        headers: { 'x-signature-256': signBody('k', body, at), 'x-signature-timestamp': String(at) },
      }).then((r) => r.status);
    };
    expect(await send('disk full')).toBe(202);
    const run = await waitUntil(() => framesOf(bridge, 'user_message')[0], 5000, 'the first run');
    await costTurn(world, bridge, run, 'w1', 2);
    expect(await send('disk still full')).toBe(202);
    await world.tg.waitFor(
      () =>
        world.tg
          .messages(chatId)
          .find((m) => m.from === 'bot' && m.text.startsWith('The agent’s daily budget')),
      { timeoutMs: 5000 },
    );
    await sleep(300);
    expect(framesOf(bridge, 'user_message')).toHaveLength(1);
  });
});
