/**
 * What a user does in a conversation, through the whole system: steer a running turn, stop it, send a
 * photo, talk in a forum topic.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { reply, rule, say, text, toolUse } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * What the bot shows in a chat now: its messages' texts and, in a private chat with rich replies, the
 * live draft's (a turn's text is a draft until it ends).
 */
function shown(telegram: Parameters<typeof botMessages>[0], chatId: number): string[] {
  const draft = telegram.chat(chatId).drafts.at(-1)?.text;
  return [...botMessages(telegram, chatId).map((m) => m.text), ...(draft ? [draft] : [])];
}

describe('end to end: a conversation', () => {
  const startSystem = systemPerTest();

  it('takes a message sent mid-turn into the running turn and shows it as taken', async () => {
    const system = await startSystem({
      rules: [
        rule(
          'look around',
          (ctx) =>
            reply(
              [
                text('Looking at the notes first, slowly and carefully.'),
                toolUse('Glob', { pattern: '*.txt', path: ctx.cwd }),
              ],
              {
                chunkSize: 4,
                chunkDelayMs: 80,
              },
            ),
          say('Nothing there.'),
        ),
        rule('mention cats', say('Noted: cats.')),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'look around');
    await telegram.waitFor(() => shown(telegram, chatId).find((t) => t.includes('Looking at')), {
      timeoutMs: 60_000,
    });
    const reactions: string[][] = [];
    const off = telegram.subscribe((event) => {
      if (event.type === 'reaction' && event.message.chatId === chatId)
        reactions.push(event.message.reactions);
    });
    const before = botMessages(telegram, chatId).length;
    const steer = telegram.sendText(chatId, 'also mention cats');
    // The steer's state is a reaction on it, not a message: 👀 while it waits for the model's next step,
    // ✍ once that step reads it into the running turn.
    await telegram.waitFor(
      () => telegram.message(chatId, steer.messageId)?.reactions.includes('✍') || undefined,
      {
        timeoutMs: 60_000,
      },
    );
    off();
    expect(reactions[0]).toEqual(['👀']);
    expect(botMessages(telegram, chatId).filter((m) => m.replyToMessageId === steer.messageId)).toEqual([]);
    expect(botMessages(telegram, chatId).length).toBe(before);
    // The model saw it as a steer inside the same turn and the answer continues the same reply.
    const answer = await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).find(
          (m) => m.text.includes('Looking at') && m.text.includes('Noted: cats.'),
        ),
      { timeoutMs: 60_000 },
    );
    expect(answer.text.indexOf('Looking at')).toBeLessThan(answer.text.indexOf('Noted: cats.'));
    expect(system.model.messageRequests().some((r) => r.view?.userTextSource === 'steer')).toBe(true);
  });

  it('/stop interrupts a running turn, and the next message is answered normally', async () => {
    const endless = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const system = await startSystem({
      rules: [
        rule('ramble', say(endless, { chunkSize: 5, chunkDelayMs: 60 })),
        rule('short', say('Short answer.')),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'ramble on');
    await telegram.waitFor(() => shown(telegram, chatId).find((t) => t.includes('word3')), {
      timeoutMs: 60_000,
    });
    telegram.sendText(chatId, '/stop');
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => /interrupt|stopped/i.test(m.text)),
      {
        timeoutMs: 30_000,
      },
    );
    const partial = botMessages(telegram, chatId).find((m) => m.text.includes('word3'));
    expect(partial?.text).not.toContain('word199');
    telegram.sendText(chatId, 'short one');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Short answer.'), {
      timeoutMs: 60_000,
    });
  });

  it('passes a photo to Claude as an image, with its caption as the text', async () => {
    const system = await startSystem({ rules: [rule('what is this', say('A very small picture.'))] });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendPhoto(chatId, { data: PNG, caption: 'what is this', width: 1, height: 1 });
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === 'A very small picture.'),
      {
        timeoutMs: 60_000,
      },
    );
    const body = JSON.stringify(system.model.messageRequests().at(-1)?.body ?? {});
    expect(body).toContain('"type":"image"');
    expect(body).toContain(PNG.toString('base64'));
    // The file was saved in the agent's exchange directory, under a generated name.
    const inbox = path.join(system.dir, 'state', 'files');
    const saved = readdirSync(inbox, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(saved).toHaveLength(1);
    const file = saved[0];
    expect(file && readFileSync(path.join(file.parentPath, file.name)).equals(PNG)).toBe(true);
  });

  it('answers in the forum topic the message came from', async () => {
    const system = await startSystem({ rules: [rule('topic question', say('Answer in the topic.'))] });
    const { telegram } = system;
    const forum = telegram.createGroup({
      title: 'Team',
      supergroup: true,
      forum: true,
      topics: ['dev', 'ops'],
    });
    const ops = forum.topics.find((t) => t.name === 'ops');
    if (!ops) throw new Error('no ops topic');
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(forum.id, '@switchyard_sandbox_bot a topic question', { threadId: ops.threadId });
    const answer = await telegram.waitFor(
      () => botMessages(telegram, forum.id).find((m) => m.text === 'Answer in the topic.'),
      { timeoutMs: 60_000 },
    );
    expect(answer.threadId).toBe(ops.threadId);
  });
});
