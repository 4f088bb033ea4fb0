/**
 * The fault matrix (issue 14): both services as real processes with the real CLI against the Telegram
 * stand-in and the scripted model, faults injected at chosen points, and every run judged by one
 * invariant checker (`faults/invariants.ts`): every user message reached the model exactly once and in
 * order, every answer is shown exactly once, no transient placeholder and no pin is left, no log line
 * carries the bot token or a message's text.
 *
 * Cases that share nothing (each in its own conversation) run at once in one system; faults that hit a
 * whole service run as phases over several conversations (private chats and forum topics) at once.
 */
import { hang, overloaded, rateLimited, type TelegramServer } from '@switchyard/sandbox';
import { afterAll, describe, expect, it } from 'vitest';
import { type Conversation, type FaultWorld, startWorld } from './faults/harness.js';
import { describeViolations } from './faults/invariants.js';
import type { Service } from './system.js';

const faults: Record<string, number> = {};
const count = (name: string, n = 1) => {
  faults[name] = (faults[name] ?? 0) + n;
};
afterAll(() => {
  const total = Object.values(faults).reduce((a, b) => a + b, 0);
  console.log(`fault matrix: ${total} faults injected: ${JSON.stringify(faults)}`);
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the world's checks, printing the services' logs when something is wrong. */
async function judge(world: FaultWorld): Promise<void> {
  await world.settled();
  const { violations, tally } = world.verdict();
  const interrupted = world.conversations.reduce((n, c) => n + c.interrupted.length, 0);
  console.log(`fault matrix tally: ${JSON.stringify(tally)}, turns cut by their fault: ${interrupted}`);
  if (violations.length > 0) console.log(world.system.logs().slice(-30_000));
  expect(describeViolations(violations)).toBe('');
}

/** A long answer in `c`, waited for until it visibly streams. */
async function streaming(world: FaultWorld, c: Conversation, lines?: number): Promise<string> {
  const token = world.nextToken(c);
  world.script(token, lines === undefined ? 'long' : { before: [], lines });
  c.ask();
  await world.shows(c, 'Line 2 of the answer');
  return token;
}

describe('fault matrix', () => {
  it('Telegram, model and CLI faults, each in its own conversation, all at once', async () => {
    const world = await startWorld({ privateChats: 6, topics: 3, agent: { maxLiveSessions: 10 } });
    try {
      const { system, conversations } = world;
      const { telegram } = system;
      const [a, b, c, d, e, f, ta, tb, tc] = conversations;
      if (!a || !b || !c || !d || !e || !f || !ta || !tb || !tc) throw new Error('missing conversations');
      const cases: Promise<void>[] = [
        // The placeholder's sendMessage carried out, its answer lost; then a reply chunk's.
        (async () => {
          telegram.dropNext('sendMessage', { chatId: a.chatId });
          count('sendMessage answer lost');
          await world.answered(a, a.ask());
          telegram.dropNext('sendMessage', { chatId: a.chatId, afterCall: false });
          count('sendMessage connection dropped before the call');
          await world.answered(a, a.ask());
        })(),
        // An edit's answer lost, twice, mid-stream.
        (async () => {
          const token = await streaming(world, b);
          telegram.dropNext('editMessageText', { chatId: b.chatId, times: 2 });
          count('editMessageText answer lost', 2);
          await world.answered(b, token);
          await world.answered(b, b.ask());
        })(),
        // Telegram answers 5xx to everything in this chat for 20 s, mid-stream.
        (async () => {
          const token = await streaming(world, c);
          telegram.failFor('*', { errorCode: 502, description: 'Bad Gateway' }, 20_000, { chatId: c.chatId });
          count('Telegram 5xx for 20 s');
          await world.answered(c, token, 120_000);
          await world.answered(c, c.ask());
        })(),
        // A 429 storm: every call in this chat refused for 8 s, from the placeholder on.
        (async () => {
          telegram.failFor(
            '*',
            { errorCode: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 },
            8_000,
            { chatId: d.chatId },
          );
          count('429 storm');
          await world.answered(d, d.ask(), 120_000);
        })(),
        // The Messages API overloaded (529) twice, then rate limited (429) twice.
        (async () => {
          world.script(world.nextToken(e), { before: [overloaded(2)] });
          count('Messages API 529', 2);
          await world.answered(e, e.ask(), 120_000);
          world.script(world.nextToken(e), { before: [rateLimited(1, 2)] });
          count('Messages API 429', 2);
          await world.answered(e, e.ask(), 120_000);
        })(),
        // The CLI killed while idle: the next message resumes the session in a new process.
        (async () => {
          await world.answered(ta, ta.ask());
          const pid = system.claudePid(ta.chatId, ta.threadId);
          if (pid === undefined) throw new Error('no claude process recorded for the topic');
          process.kill(pid, 'SIGKILL');
          count('CLI killed idle');
          await pause(1_000);
          await world.answered(ta, ta.ask());
        })(),
        // The CLI killed mid-turn: the turn is reported as failed, the next message is answered.
        (async () => {
          const token = await streaming(world, tb);
          const pid = system.claudePid(tb.chatId, tb.threadId);
          if (pid === undefined) throw new Error('no claude process recorded for the topic');
          process.kill(pid, 'SIGKILL');
          tb.interrupted.push(token);
          count('CLI killed mid-turn');
          await pause(2_000);
          await world.answered(tb, tb.ask());
        })(),
        // The model call hangs (the CLI waits forever): /stop ends the turn, the next message is answered.
        (async () => {
          const token = world.nextToken(tc);
          world.script(token, { before: [hang()] });
          tc.ask();
          await system.model.waitForRequest((r) => JSON.stringify(r.body ?? '').includes(token), {
            timeoutMs: 60_000,
          });
          count('CLI hung on the Messages API');
          tc.interrupted.push(token);
          telegram.sendText(tc.chatId, '/stop', tc.threadId === undefined ? {} : { threadId: tc.threadId });
          await pause(2_000);
          await world.answered(tc, tc.ask());
        })(),
        // f: a quiet conversation alongside, to show nothing leaks into it.
        (async () => {
          await world.answered(f, f.ask());
        })(),
      ];
      await Promise.all(cases);
      // Whole-service Telegram faults, two conversations at once.
      telegram.stallUpdates(8_000);
      count('getUpdates stalled');
      const stalled = [a.ask(), tb.ask()];
      await Promise.all([world.answered(a, stalled[0] ?? ''), world.answered(tb, stalled[1] ?? '')]);
      const rival = await secondPoller(telegram.apiRoot, system.token, 3);
      count('409 from a second poller', rival);
      const after = [f.ask(), ta.ask()];
      await Promise.all([world.answered(f, after[0] ?? ''), world.answered(ta, after[1] ?? '')]);
      await judge(world);
    } finally {
      await world.stop();
    }
  }, 300_000);

  it('either service killed (SIGKILL, SIGTERM) at chosen points, private chats and a topic at once', async () => {
    const world = await startWorld({ privateChats: 2, topics: 1, card: { showDelayMs: 1_000 } });
    try {
      const { system, conversations } = world;
      const { telegram } = system;
      const [a, b, t] = conversations;
      if (!a || !b || !t) throw new Error('missing conversations');
      const restart = async (service: Service, signal: NodeJS.Signals, downMs = 1_000) => {
        await system.kill(service, signal);
        count(`${service} ${signal}`);
        await pause(downMs);
        system.start(service);
      };
      /** Long answers in `a` and the topic, both visibly streaming. */
      const twoStreaming = async () => Promise.all([streaming(world, a), streaming(world, t)]);
      const bothAnswered = async ([x, y]: string[]) => {
        await Promise.all([world.answered(a, x ?? ''), world.answered(t, y ?? '')]);
      };

      // Mid-stream, each service, each signal.
      for (const [service, signal] of [
        ['bridge', 'SIGKILL'],
        ['bridge', 'SIGTERM'],
        ['gateway', 'SIGKILL'],
        ['gateway', 'SIGTERM'],
      ] as const) {
        const tokens = await twoStreaming();
        // A message sent while it is down waits for it.
        await restart(service, signal);
        await bothAnswered(tokens);
      }

      // The queue non-empty: two more messages wait behind a streaming answer when the bridge dies.
      const first = await streaming(world, a);
      const queued = [a.ask(), a.ask()];
      await pause(300);
      await restart('bridge', 'SIGKILL');
      for (const token of [first, ...queued]) await world.answered(a, token);

      // Between the update and its placeholder: killed as the poll hands the message over.
      const handedOver = nextCall(telegram, 'getUpdates');
      const token = b.ask();
      await handedOver;
      await restart('gateway', 'SIGKILL');
      await world.answered(b, token);

      // The placeholder sent, its id not yet known to the gateway.
      const placeholder = nextCall(telegram, 'sendMessage', b.chatId);
      const token2 = b.ask();
      await placeholder;
      await restart('gateway', 'SIGKILL');
      await world.answered(b, token2);

      // During a pin: the card of a long turn is being pinned.
      const pinning = nextCall(telegram, 'pinChatMessage');
      const pinned = await streaming(world, a, 40);
      await pinning;
      await restart('gateway', 'SIGKILL');
      await world.answered(a, pinned);

      // The bridge restarted 10 times in a minute during one long turn, signals alternating.
      const long = await streaming(world, t, 80);
      for (let i = 0; i < 10; i++) {
        await restart('bridge', i % 2 === 0 ? 'SIGKILL' : 'SIGTERM', 200);
        await pause(1_500);
      }
      await world.answered(t, long, 120_000);
      await world.answered(b, b.ask());
      await judge(world);
    } finally {
      await world.stop();
    }
  }, 400_000);
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

/** Polls `getUpdates` as a second bot instance would, `times` times; returns how many 409s it caused. */
async function secondPoller(apiRoot: string, token: string, times: number): Promise<number> {
  let done = 0;
  for (let i = 0; i < times; i++) {
    // Without `offset` nothing is confirmed: the updates stay for the gateway.
    const res = await fetch(`${apiRoot}/bot${token}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 0 }),
    });
    await res.json();
    done++;
    await pause(300);
  }
  return done;
}
