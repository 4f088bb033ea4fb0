/**
 * Files the agent sends, through the whole system: the real CLI calls Switchyard's `send_file` and
 * `send_photo` tools, the bridge copies the files, the gateway uploads them, and the stand-in Telegram
 * must hold the very bytes (by checksum) in the chat and forum topic the turn came from, as a reply to
 * the user's message, with the caption rendered. A gateway killed between the tool call and the upload
 * must send the file exactly once after it is back.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { rule, say, sendFile, sendPhoto } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { download, sha256 } from './downloads.js';
import { botMessages, systemPerTest } from './system.js';

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const allowOf = (m: { replyMarkup?: { inline_keyboard: { text: string }[][] } }) =>
  m.replyMarkup?.inline_keyboard.flat().find((b) => b.text.includes('Allow'))?.text;

describe('end to end: files the agent sends', () => {
  const startSystem = systemPerTest();

  it('sends a document and a photo into the forum topic, as replies, with captions, bytes intact', async () => {
    const report = Buffer.from(`revenue,${Math.random()}\n`.repeat(50_000));
    const system = await startSystem({
      rules: [
        rule(
          'report please',
          sendFile('report.csv', 'The **Q3** report'),
          sendPhoto('chart.png', 'And the chart'),
          say('Both sent.'),
        ),
      ],
    });
    const { telegram } = system;
    writeFileSync(path.join(system.dir, 'work', 'report.csv'), report);
    writeFileSync(path.join(system.dir, 'work', 'chart.png'), PNG);
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
    const asked = telegram.sendText(forum.id, '@switchyard_sandbox_bot report please', {
      threadId: ops.threadId,
    });
    // A group: each send waits for an allowed user's Allow (confirmFileSends, tests/file-confirm.test.ts).
    const pressed = new Set<number>();
    for (let i = 0; i < 2; i++) {
      const prompt = await telegram.waitFor(
        () => botMessages(telegram, forum.id).find((m) => !pressed.has(m.messageId) && allowOf(m)),
        { timeoutMs: 90_000 },
      );
      pressed.add(prompt.messageId);
      telegram.pressButton(forum.id, prompt.messageId, { text: allowOf(prompt) ?? '' });
    }
    await telegram.waitFor(() => botMessages(telegram, forum.id).find((m) => m.text === 'Both sent.'), {
      timeoutMs: 90_000,
    });
    const bot = botMessages(telegram, forum.id);
    const documents = bot.filter((m) => m.kind === 'document');
    const photos = bot.filter((m) => m.kind === 'photo');
    expect(documents).toHaveLength(1);
    expect(photos).toHaveLength(1);
    const [doc] = documents;
    const [photo] = photos;
    expect(doc).toMatchObject({
      threadId: ops.threadId,
      replyToMessageId: asked.messageId,
      text: 'The Q3 report',
    });
    expect(doc?.file?.fileName).toBe('report.csv');
    expect(doc?.entities).toEqual([expect.objectContaining({ type: 'bold' })]);
    expect(photo).toMatchObject({
      threadId: ops.threadId,
      replyToMessageId: asked.messageId,
      text: 'And the chart',
    });
    expect(sha256(await download(telegram, doc?.file?.fileId ?? ''))).toBe(sha256(report));
    expect(sha256(await download(telegram, photo?.file?.fileId ?? ''))).toBe(sha256(PNG));
    // Nothing went to another chat.
    expect(telegram.messages(system.chatId).filter((m) => m.from === 'bot')).toHaveLength(0);
  });

  it('a gateway killed between the tool call and the upload sends the file exactly once', async () => {
    const bytes = Buffer.from(`artifact ${Math.random()}\n`.repeat(10_000));
    let killed: Promise<void> | undefined;
    const system = await startSystem({
      rules: [
        rule(
          'build it',
          () => {
            // The model's tool call is served only after the gateway is gone.
            killed = system.kill('gateway', 'SIGKILL');
            return sendFile('artifact.bin', 'Built');
          },
          say('Artifact sent.'),
        ),
      ],
    });
    const { telegram, chatId } = system;
    writeFileSync(path.join(system.dir, 'work', 'artifact.bin'), bytes);
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'build it');
    await telegram.waitFor(() => killed, { timeoutMs: 60_000 });
    await killed;
    // Let the CLI make the call against a bridge with no gateway, then bring the gateway back.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(botMessages(telegram, chatId).filter((m) => m.kind === 'document')).toHaveLength(0);
    system.start('gateway');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Artifact sent.'), {
      timeoutMs: 90_000,
    });
    // A little longer: a duplicate upload would land after the reply.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const documents = botMessages(telegram, chatId).filter((m) => m.kind === 'document');
    expect(documents).toHaveLength(1);
    expect(sha256(await download(telegram, documents[0]?.file?.fileId ?? ''))).toBe(sha256(bytes));
  });
});
