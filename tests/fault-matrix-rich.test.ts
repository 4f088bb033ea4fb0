/**
 * The fault matrix over rich replies (the product's default, `replies: rich`): a private chat streams
 * its answer in drafts and keeps it as one `sendRichMessage`; a group's placeholder is edited into a
 * rich message. The same invariant checker as `fault-matrix.test.ts` judges the run: every message read
 * once, every answer shown once (as a rich message or a classic one, never both), no placeholder, pin
 * or live prompt buttons left.
 *
 * Private chats and forum topics (each topic in its own forum, so one chat's faults and flood limits
 * stay its own) take their Telegram faults at once, then both services are killed mid-stream.
 */
import { describe, it } from 'vitest';
import { faultCounter, judge, pause, promptOpen, streaming } from './faults/cases.js';
import { startWorld } from './faults/harness.js';
import type { Service } from './system.js';

const count = faultCounter('rich fault matrix');

/** Every call in a chat refused with 429 for `ms`. */
const STORM = { errorCode: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 } as const;

describe('fault matrix, rich replies', () => {
  it('Telegram faults, then either service SIGKILLed mid-stream, private chats and topics at once', async () => {
    const world = await startWorld({
      privateChats: 3,
      topics: 2,
      forumPerTopic: true,
      agent: { replies: 'rich' },
    });
    try {
      const { system, conversations } = world;
      const { telegram } = system;
      const [a, b, c, ta, tb] = conversations;
      if (!a || !b || !c || !ta || !tb) throw new Error('missing conversations');
      await world.connected();
      await Promise.all([
        // The rich message carried out, its answer lost; then dropped before the call.
        (async () => {
          telegram.dropNext('sendRichMessage', { chatId: a.chatId });
          count('sendRichMessage answer lost');
          await world.answered(a, a.ask());
          telegram.dropNext('sendRichMessage', { chatId: a.chatId, afterCall: false });
          count('sendRichMessage connection dropped before the call');
          await world.answered(a, a.ask());
        })(),
        // A topic's rich edits: two answers lost mid-stream.
        (async () => {
          const token = await streaming(world, ta);
          telegram.dropNext('editMessageText', { chatId: ta.chatId, times: 2 });
          count('rich editMessageText answer lost', 2);
          await world.answered(ta, token);
        })(),
        // A 429 storm in a private chat (drafts and the rich message) and in a topic, mid-stream.
        ...[b, tb].map(async (x) => {
          const token = await streaming(world, x);
          telegram.failFor('*', STORM, 8_000, { chatId: x.chatId });
          count(`429 storm mid-stream (${x.threadId === undefined ? 'private chat' : 'topic'})`);
          await world.answered(x, token, 120_000);
        }),
        // A permission prompt beside rich replies: its press answered, the tool run once.
        (async () => {
          const prompt = await promptOpen(world, c);
          world.press(c, prompt.messageId, '✅ Allow');
          await world.answered(c, prompt.token);
        })(),
      ]);
      // Either service SIGKILLed while a private chat and a topic stream.
      for (const service of ['gateway', 'bridge'] as const satisfies readonly Service[]) {
        const tokens = await Promise.all([streaming(world, a), streaming(world, ta)]);
        await system.kill(service, 'SIGKILL');
        count(`${service} SIGKILL mid-stream`);
        await pause(1_000);
        system.start(service);
        await Promise.all([world.answered(a, tokens[0]), world.answered(ta, tokens[1])]);
      }
      await world.answered(b, b.ask());
      await judge(world, 'rich fault matrix');
    } finally {
      await world.stop();
    }
  }, 300_000);
});
