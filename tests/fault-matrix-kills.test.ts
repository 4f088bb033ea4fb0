/**
 * The kill matrix: either service killed (SIGKILL, SIGTERM) at chosen points, judged by the same invariant
 * checker as `fault-matrix.test.ts` (every message read once and in order, every answer shown once, no
 * placeholder, pin or live prompt left, every press answered, no secret or text in a log).
 *
 * A kill hits every conversation of its system, so phases that kill a service cannot share a system
 * without running one after another. Each group of phases below has a system of its own, and the groups
 * run side by side (`describe.concurrent`): the file takes as long as its longest group, not their sum.
 * Each topic sits in its own forum: a forum's 20 messages a minute, shared by two topics' replies, cards
 * and prompts, made every row wait on Telegram's budget rather than on the fault.
 */
import type { TelegramServer } from '@switchyard/sandbox';
import { describe, it } from 'vitest';
import { faultCounter, judge as judgeWorld, pause, promptOpen, streaming } from './faults/cases.js';
import { type Conversation, type FaultWorld, startWorld } from './faults/harness.js';
import type { Service } from './system.js';

const count = faultCounter('kill matrix');
const judge = (world: FaultWorld) => judgeWorld(world, 'kill matrix');

/** Kills `service` of the world's system, runs `whileDown`, and starts it again `downMs` later. */
async function restart(
  world: FaultWorld,
  service: Service,
  signal: NodeJS.Signals,
  downMs = 1_000,
  whileDown = () => {},
): Promise<void> {
  await world.system.kill(service, signal);
  count(`${service} ${signal}`);
  whileDown();
  await pause(downMs);
  world.system.start(service);
}

/** The conversations a world was asked for, or a clear failure when one is missing. */
function all(world: FaultWorld, n: number): Conversation[] {
  if (world.conversations.length < n) throw new Error(`missing conversations: ${world.conversations.length}`);
  return world.conversations;
}

/**
 * Mid-stream, for each signal: a long answer streams in a private chat and in a topic while a permission
 * prompt is open in another private chat and another topic, and the user presses Allow while the service
 * is down or once it is back. The prompts open first: opening one takes longer than a long answer
 * streams, so streams started beside them had ended before the kill.
 */
async function midStreamRows(
  service: Service,
  rows: readonly (readonly [NodeJS.Signals, 'while down' | 'after restart'])[],
): Promise<void> {
  const world = await startWorld({
    privateChats: 2,
    topics: 2,
    forumPerTopic: true,
    card: { showDelayMs: 1_000 },
  });
  try {
    const [a, p, t, tp] = all(world, 4) as [Conversation, Conversation, Conversation, Conversation];
    for (const [signal, pressed] of rows) {
      const prompts = await Promise.all([promptOpen(world, p), promptOpen(world, tp)]);
      const tokens = await Promise.all([streaming(world, a), streaming(world, t)]);
      const allow = () => {
        world.press(p, prompts[0].messageId, '✅ Allow');
        world.press(tp, prompts[1].messageId, '✅ Allow');
      };
      await restart(world, service, signal, 1_000, pressed === 'while down' ? allow : undefined);
      count(`prompt open through ${service} ${signal}, pressed ${pressed}`, 2);
      if (pressed === 'after restart') {
        await pause(2_000); // the service is back at work: the press is not just queued for it
        allow();
      }
      await Promise.all([
        world.answered(a, tokens[0]),
        world.answered(t, tokens[1]),
        world.answered(p, prompts[0].token),
        world.answered(tp, prompts[1].token),
      ]);
    }
    await judge(world);
  } finally {
    await world.stop();
  }
}

describe.concurrent('kill matrix: either service killed at chosen points, each group in its own system', () => {
  it('the bridge killed mid-stream (SIGKILL, pressed while down; SIGTERM, pressed after restart)', async () => {
    await midStreamRows('bridge', [
      ['SIGKILL', 'while down'],
      ['SIGTERM', 'after restart'],
    ]);
  }, 300_000);

  it('the gateway killed mid-stream (SIGKILL, pressed after restart; SIGTERM, pressed while down)', async () => {
    await midStreamRows('gateway', [
      ['SIGKILL', 'after restart'],
      ['SIGTERM', 'while down'],
    ]);
  }, 300_000);

  it('killed at a point: a queue behind a stream, the update handed over, the placeholder sent, a pin', async () => {
    const world = await startWorld({ privateChats: 2, topics: 0, card: { showDelayMs: 1_000 } });
    try {
      const { telegram } = world.system;
      const [a, b] = all(world, 2) as [Conversation, Conversation];
      // The queue non-empty: two more messages wait behind a streaming answer when the bridge dies.
      const first = await streaming(world, a);
      const queued = [a.ask(), a.ask()];
      await pause(300);
      await restart(world, 'bridge', 'SIGKILL');
      for (const token of [first, ...queued]) await world.answered(a, token);

      // Between the update and its placeholder: killed as the poll hands the message over.
      const handedOver = nextCall(telegram, 'getUpdates');
      const token = b.ask();
      await handedOver;
      await restart(world, 'gateway', 'SIGKILL');
      await world.answered(b, token);

      // The placeholder sent, its id not yet known to the gateway.
      const placeholder = nextCall(telegram, 'sendMessage', b.chatId);
      const token2 = b.ask();
      await placeholder;
      await restart(world, 'gateway', 'SIGKILL');
      await world.answered(b, token2);

      // During a pin: the card of a long turn is being pinned.
      const pinning = nextCall(telegram, 'pinChatMessage');
      const pinned = await streaming(world, a, 40);
      await pinning;
      await restart(world, 'gateway', 'SIGKILL');
      await world.answered(a, pinned);
      await judge(world);
    } finally {
      await world.stop();
    }
  }, 300_000);

  it('the bridge restarted 10 times in a minute during one long turn, signals alternating', async () => {
    const world = await startWorld({
      privateChats: 1,
      topics: 1,
      forumPerTopic: true,
      card: { showDelayMs: 1_000 },
    });
    try {
      const [b, t] = all(world, 2) as [Conversation, Conversation];
      const long = await streaming(world, t, 80);
      for (let i = 0; i < 10; i++) {
        await restart(world, 'bridge', i % 2 === 0 ? 'SIGKILL' : 'SIGTERM', 200);
        await pause(1_500);
      }
      await world.answered(t, long, 120_000);
      await world.answered(b, b.ask());
      await judge(world);
    } finally {
      await world.stop();
    }
  }, 300_000);
});

/** Resolves when the stand-in has answered the next call of `method` (in `chatId`), at that moment. */
function nextCall(telegram: TelegramServer, method: string, chatId?: number): Promise<void> {
  return new Promise((resolve) => {
    const off = telegram.subscribe((event) => {
      if (event.type !== 'api_call' || event.call.method !== method) return;
      if (chatId !== undefined && event.call.chatId !== chatId) return;
      off();
      resolve();
    });
  });
}
