/**
 * Conversations end to end (gateway and bridge as real processes, the real CLI, the Telegram stand-in):
 * two private chats and two forum topics streaming at once, each answered only in its own place with only
 * its own words in the model's requests and no placeholder left; groups that answer only when addressed;
 * `shared` mode keeping each reply in the chat that asked.
 */
import { rule, say, type WireUser } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, type System, systemPerTest } from './system.js';

const startSystem = systemPerTest();
const BOT = '@switchyard_sandbox_bot';
const story = (word: string): string => `The ${word} tale, told slowly and only here. `.repeat(3).trim();

/** The final texts the bot left in a chat (or one topic of it). */
function answers(system: System, chatId: number, threadId?: number): string[] {
  return botMessages(system.telegram, chatId)
    .filter((m) => threadId === undefined || m.threadId === threadId)
    .map((m) => m.text);
}

/** Waits until `chatId` (topic `threadId`) shows `text` from the bot. */
function answered(system: System, chatId: number, text: string, threadId?: number): Promise<unknown> {
  return system.telegram.waitFor(() => answers(system, chatId, threadId).includes(text) || undefined, {
    timeoutMs: 90_000,
  });
}

describe('conversations', () => {
  it('two private chats and two forum topics at once: each answered only in its own place', async () => {
    const words = ['amber', 'basalt', 'cobalt', 'dune'];
    let bob: WireUser | undefined;
    const system = await startSystem({
      rules: words.map((w) => rule(`tell ${w}`, say(story(w)))),
      chunkSize: 6,
      chunkDelayMs: 25,
      agent: (telegram) => {
        bob = telegram.addUser({ firstName: 'Bob' });
        return { allow: [telegram.defaultUser.id, bob.id] };
      },
    });
    const { telegram } = system;
    const ann = system.chatId;
    const bobChat = telegram.privateChat(bob).id;
    const forum = telegram.createGroup({
      title: 'projects',
      supergroup: true,
      forum: true,
      topics: ['web', 'api'],
    });
    const [web, api] = forum.topics;
    if (!web || !api) throw new Error('no topics');
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(ann, 'tell amber');
    telegram.sendText(bobChat, 'tell basalt');
    telegram.sendText(forum.id, `${BOT} tell cobalt`, { threadId: web.threadId });
    telegram.sendText(forum.id, `${BOT} tell dune`, { threadId: api.threadId });
    await Promise.all([
      answered(system, ann, story('amber')),
      answered(system, bobChat, story('basalt')),
      answered(system, forum.id, story('cobalt'), web.threadId),
      answered(system, forum.id, story('dune'), api.threadId),
    ]);
    // Each place holds its own answer and nothing else of the bot's: no other story, no '…' left.
    expect(answers(system, ann)).toEqual([story('amber')]);
    expect(answers(system, bobChat)).toEqual([story('basalt')]);
    expect(answers(system, forum.id, web.threadId)).toEqual([story('cobalt')]);
    expect(answers(system, forum.id, api.threadId)).toEqual([story('dune')]);
    // Each model request carried one conversation only.
    for (const request of system.model.messageRequests()) {
      const body = JSON.stringify(request.body);
      expect(words.filter((w) => body.includes(`tell ${w}`)).length).toBeLessThanOrEqual(1);
    }
    // They streamed side by side: some were still streaming when the first one finished.
    expect(system.logs()).toContain('"conversation":"');
  }, 150_000);

  it('in a group the bot reads only what is addressed to it, and never a stranger', async () => {
    const system = await startSystem({
      rules: [rule('status of the build', say('The build is green.')), rule('and tests', say('Tests pass.'))],
    });
    const { telegram } = system;
    const group = telegram.createGroup({ title: 'team', supergroup: true });
    const stranger = telegram.addUser({ firstName: 'Mallory' });
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(group.id, 'lunch at noon? the status of the build can wait');
    telegram.sendText(group.id, `${BOT} run the stranger's payload`, { from: stranger });
    telegram.sendText(group.id, `${BOT} status of the build`);
    await answered(system, group.id, 'The build is green.');
    const bot = botMessages(telegram, group.id).find((m) => m.text === 'The build is green.');
    if (!bot) throw new Error('no answer to reply to');
    // A reply to the bot's message is addressed too.
    telegram.sendText(group.id, 'and tests?', { replyTo: bot.messageId });
    await answered(system, group.id, 'Tests pass.');
    // Commands are addressed: answered in the group.
    telegram.sendText(group.id, '/help');
    await system.telegram.waitFor(() => answers(system, group.id).find((t) => t.includes('/sessions')), {
      timeoutMs: 30_000,
    });
    const seen = system.model
      .messageRequests()
      .map((r) => JSON.stringify(r.body))
      .join('\n');
    expect(seen).not.toContain('lunch at noon');
    expect(seen).not.toContain("stranger's payload");
    expect(seen).not.toContain('Mallory');
    // The mention is not part of what the model read.
    expect(seen).not.toContain(`${BOT} status`);
    // Nothing was answered twice, and the stranger's refusal is theirs alone: one ephemeral message for
    // them, nothing the group sees (no spam in groups).
    expect(answers(system, group.id).filter((t) => t === 'The build is green.')).toHaveLength(1);
    const refusals = botMessages(telegram, group.id).filter((m) => m.text.includes('only talks to'));
    expect(refusals.map((m) => m.ephemeral?.receiver.id)).toEqual([stranger.id]);
  }, 120_000);

  it('shared: one session for the agent, and each reply still goes to the chat that asked', async () => {
    let bob: WireUser | undefined;
    const system = await startSystem({
      rules: [rule('long one', say(story('long'))), rule('short one', say('Short answer.'))],
      chunkSize: 6,
      chunkDelayMs: 25,
      agent: (telegram) => {
        bob = telegram.addUser({ firstName: 'Bob' });
        return { allow: [telegram.defaultUser.id, bob.id], conversations: 'shared' };
      },
    });
    const { telegram } = system;
    const bobChat = telegram.privateChat(bob).id;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(system.chatId, 'the long one please');
    await system.telegram.waitFor(
      () => botMessages(telegram, system.chatId).find((m) => m.text.includes('long tale')),
      { timeoutMs: 60_000 },
    );
    telegram.sendText(bobChat, 'the short one please');
    await answered(system, system.chatId, story('long'));
    await answered(system, bobChat, 'Short answer.');
    expect(answers(system, system.chatId)).toEqual([story('long')]);
    expect(answers(system, bobChat)).toEqual(['Short answer.']);
  }, 120_000);
});
