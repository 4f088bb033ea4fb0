/**
 * The fault matrix (issue 14): both services as real processes with the real CLI against the Telegram
 * stand-in and the scripted model, faults injected at chosen points, and every run judged by one
 * invariant checker (`faults/invariants.ts`): every user message reached the model exactly once and in
 * order, every answer is shown exactly once, no transient placeholder and no pin is left, every prompt
 * (a permission request, a question) was shown once and answered once with its tool run once and no
 * live buttons left, every button press was answered, no log line carries the bot token or a message's
 * text. Replies take the classic path here; `fault-matrix-rich.test.ts` runs faults over rich replies.
 *
 * Cases that share nothing (each in its own conversation) run at once in one system. Faults that hit a
 * whole service (either one killed at chosen points) are in `fault-matrix-kills.test.ts`.
 */
import { hang, overloaded, rateLimited } from '@switchyard/sandbox';
import { describe, it } from 'vitest';
import { faultCounter, judge as judgeWorld, pause, promptOpen, streaming } from './faults/cases.js';
import { type FaultWorld, startWorld } from './faults/harness.js';

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
});

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
