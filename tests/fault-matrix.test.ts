/**
 * The fault matrix (issue 14): both services as real processes with the real CLI against the Telegram
 * stand-in and the scripted model, faults injected at chosen points, and every run judged by one
 * invariant checker (`faults/invariants.ts`): every user message reached the model exactly once and in
 * order, every answer is shown exactly once, no transient placeholder and no pin is left, every prompt
 * (a permission request, a question) was shown once and answered once with its tool run once and no
 * live buttons left, every button press was answered, no log line carries the bot token or a message's
 * text. Replies take the classic path here; `fault-matrix-rich.test.ts` runs faults over rich replies.
 *
 * Cases that share nothing (each in its own conversation) run at once in one system; faults that hit a
 * whole service run as phases over several conversations (private chats and forum topics) at once.
 */
import { hang, overloaded, rateLimited, type TelegramServer } from '@switchyard/sandbox';
import { describe, it } from 'vitest';
import { faultCounter, judge as judgeWorld, pause, promptOpen, streaming } from './faults/cases.js';
import { type FaultWorld, startWorld } from './faults/harness.js';
import type { Service } from './system.js';

const count = faultCounter('fault matrix');
const judge = (world: FaultWorld) => judgeWorld(world, 'fault matrix');

describe('fault matrix', () => {
  it('Telegram, model and CLI faults, each in its own conversation, all at once', async () => {
    const world = await startWorld({ privateChats: 8, topics: 3, agent: { maxLiveSessions: 12 } });
    try {
      const { system, conversations } = world;
      const { telegram } = system;
      const [a, b, c, d, e, f, g, h, ta, tb, tc] = conversations;
      if (!a || !b || !c || !d || !e || !f || !g || !h || !ta || !tb || !tc)
        throw new Error('missing conversations');
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
        // Permission prompts whose press or edit is lost, and a double press. g is the only chat
        // pressing buttons in this phase, so `answerCallbackQuery` faults need no chat filter.
        (async () => {
          const lostAnswer = await promptOpen(world, g);
          telegram.dropNext('answerCallbackQuery');
          count('answerCallbackQuery answer lost');
          world.press(g, lostAnswer.messageId, '✅ Allow');
          await world.answered(g, lostAnswer.token);
          const neverAnswered = await promptOpen(world, g);
          telegram.dropNext('answerCallbackQuery', { afterCall: false });
          count('answerCallbackQuery connection dropped before the call');
          world.press(g, neverAnswered.messageId, '✅ Allow');
          await world.answered(g, neverAnswered.token);
          const lostEdit = await promptOpen(world, g);
          telegram.dropNext('editMessageText', { chatId: g.chatId, afterCall: false });
          count("prompt's edit dropped before the call");
          world.press(g, lostEdit.messageId, '✅ Allow');
          await world.answered(g, lostEdit.token);
          const twice = await promptOpen(world, g);
          world.press(g, twice.messageId, '✅ Allow');
          world.press(g, twice.messageId, '✅ Allow', { force: true });
          count('prompt pressed twice');
          await world.answered(g, twice.token);
        })(),
        // A question of ~2,500 characters answered with ~3,000 typed ones.
        (async () => {
          const token = world.nextToken(h);
          world.script(token, { prompt: 'question', padding: 2_500 });
          h.ask();
          await world.prompt(h, token);
          telegram.sendText(h.chatId, `My answer: ${'go on, and mind the details. '.repeat(107)}`);
          count('long question, long typed answer');
          await world.answered(h, token);
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
    // Each topic in its own forum: a forum's 20 messages a minute, shared by two topics' replies, cards,
    // done notices and prompts, made every row wait on Telegram's budget rather than on the fault.
    const world = await startWorld({
      privateChats: 3,
      topics: 2,
      forumPerTopic: true,
      card: { showDelayMs: 1_000 },
    });
    try {
      const { system, conversations } = world;
      const { telegram } = system;
      const [a, b, p, t, tp] = conversations;
      if (!a || !b || !p || !t || !tp) throw new Error('missing conversations');
      /** Kills `service`, runs `whileDown`, and starts it again. */
      const restart = async (
        service: Service,
        signal: NodeJS.Signals,
        downMs = 1_000,
        whileDown = () => {},
      ) => {
        await system.kill(service, signal);
        count(`${service} ${signal}`);
        whileDown();
        await pause(downMs);
        system.start(service);
      };
      /** Long answers in `a` and the topic, both visibly streaming. */
      const twoStreaming = async () => Promise.all([streaming(world, a), streaming(world, t)]);
      const bothAnswered = async ([x, y]: string[]) => {
        await Promise.all([world.answered(a, x ?? ''), world.answered(t, y ?? '')]);
      };

      // Mid-stream, each service, each signal; meanwhile a permission prompt is open in a private chat
      // and in a topic, and the user presses Allow while the service is down or once it is back. The
      // prompts open first: opening one takes longer than a long answer streams, so streams started
      // beside them had ended before the kill.
      for (const [service, signal, pressed] of [
        ['bridge', 'SIGKILL', 'while down'],
        ['bridge', 'SIGTERM', 'after restart'],
        ['gateway', 'SIGKILL', 'after restart'],
        ['gateway', 'SIGTERM', 'while down'],
      ] as const) {
        const prompts = await Promise.all([promptOpen(world, p), promptOpen(world, tp)]);
        const tokens = await twoStreaming();
        const allow = () => {
          world.press(p, prompts[0].messageId, '✅ Allow');
          world.press(tp, prompts[1].messageId, '✅ Allow');
        };
        await restart(service, signal, 1_000, pressed === 'while down' ? allow : undefined);
        count(`prompt open through ${service} ${signal}, pressed ${pressed}`, 2);
        if (pressed === 'after restart') {
          await pause(2_000); // the service is back at work: the press is not just queued for it
          allow();
        }
        await Promise.all([
          bothAnswered(tokens),
          world.answered(p, prompts[0].token),
          world.answered(tp, prompts[1].token),
        ]);
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
