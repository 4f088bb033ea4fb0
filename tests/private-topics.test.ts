/**
 * Topics in a private chat end to end (gateway and bridge as processes, the real CLI against the scripted
 * model, the stand-in Telegram with the bot's private topics on): two topics of one private chat are two
 * conversations — streaming at once, each its own Claude process and session, each answer (and its
 * drafts) in its own topic with only its own words in the model's requests; `/new` opens a new topic
 * whose session starts fresh, and the old topics stay as they were.
 */
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, type System, systemPerTest } from './system.js';

const startSystem = systemPerTest();
const story = (word: string): string => `The ${word} tale, told slowly and only here. `.repeat(8).trim();

/** The bot's final texts in one topic of the private chat. */
function answers(system: System, threadId: number): string[] {
  return botMessages(system.telegram, system.chatId)
    .filter((m) => m.threadId === threadId)
    .map((m) => m.text);
}

function answered(system: System, threadId: number, text: string): Promise<unknown> {
  return system.telegram.waitFor(() => answers(system, threadId).includes(text) || undefined, {
    timeoutMs: 90_000,
  });
}

describe('end to end: topics in a private chat', () => {
  it('two topics of one private chat at once: separate sessions, each answer in its own topic', async () => {
    const words = ['amber', 'basalt', 'cobalt'];
    const system = await startSystem({
      rules: words.map((w) => rule(`tell ${w}`, say(story(w)))),
      chunkSize: 6,
      chunkDelayMs: 40,
    });
    const { telegram, chatId } = system;
    telegram.setPrivateTopics(true);
    const web = telegram.createTopic(chatId, 'web');
    const api = telegram.createTopic(chatId, 'api');
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'tell amber', { threadId: web.threadId });
    telegram.sendText(chatId, 'tell basalt', { threadId: api.threadId });
    // Both stream at once: each topic shows a draft with text before either answer is final.
    await telegram.waitFor(
      () => {
        const drafts = telegram.chat(chatId).drafts;
        const inTopic = (id: number) => drafts.some((d) => d.threadId === id && d.text !== '');
        return inTopic(web.threadId) && inTopic(api.threadId);
      },
      { timeoutMs: 90_000 },
    );
    const live = [system.claudePid(chatId, web.threadId), system.claudePid(chatId, api.threadId)];
    await Promise.all([
      answered(system, web.threadId, story('amber')),
      answered(system, api.threadId, story('basalt')),
    ]);
    const firstFinal = Math.min(...botMessages(telegram, chatId).map((m) => m.date));
    for (const topic of [web, api])
      expect(
        telegram
          .chat(chatId)
          .drafts.some((d) => d.threadId === topic.threadId && d.text !== '' && d.at < firstFinal),
      ).toBe(true);
    expect(answers(system, web.threadId)).toEqual([story('amber')]);
    expect(answers(system, api.threadId)).toEqual([story('basalt')]);
    // No answer landed outside its topic, and every draft named its topic.
    expect(botMessages(telegram, chatId).filter((m) => m.threadId === undefined)).toEqual([]);
    expect(
      telegram.chat(chatId).drafts.every((d) => d.threadId === web.threadId || d.threadId === api.threadId),
    ).toBe(true);
    // Two Claude processes, one per topic; each model request carried one conversation only.
    expect(live[0]).toBeDefined();
    expect(live[1]).toBeDefined();
    expect(live[0]).not.toBe(live[1]);
    for (const request of system.model.messageRequests()) {
      const body = JSON.stringify(request.body);
      expect(words.filter((w) => body.includes(`tell ${w}`)).length).toBeLessThanOrEqual(1);
    }

    // /new in the web topic opens a third topic; its session starts fresh and the others stay.
    telegram.sendText(chatId, '/new', { threadId: web.threadId });
    const fresh = await telegram.waitFor(() => telegram.chat(chatId).chat.topics[2], { timeoutMs: 30_000 });
    await telegram.waitFor(
      () => answers(system, web.threadId).find((t) => t.startsWith('Opened a new topic')),
      {
        timeoutMs: 30_000,
      },
    );
    telegram.sendText(chatId, 'tell cobalt', { threadId: fresh.threadId });
    await answered(system, fresh.threadId, story('cobalt'));
    const cobalt = system.model
      .messageRequests()
      .map((r) => JSON.stringify(r.body))
      .filter((body) => body.includes('tell cobalt'));
    expect(cobalt.length).toBeGreaterThan(0);
    for (const body of cobalt) expect(body).not.toContain('tell amber');
    expect(system.claudePid(chatId, fresh.threadId)).toBeDefined();
    expect(answers(system, web.threadId).filter((t) => t === story('amber'))).toHaveLength(1);
  }, 180_000);
});
