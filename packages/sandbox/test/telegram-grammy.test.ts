import { Bot, GrammyError, InlineKeyboard, InputFile } from 'grammy';
import type { InputMediaDocument } from 'grammy/types';
import { afterEach, describe, expect, it } from 'vitest';
import { createTelegramServer, type TelegramServer } from '../src/telegram/index.js';

let server: TelegramServer | undefined;
let bot: Bot | undefined;

afterEach(async () => {
  await bot?.stop();
  await server?.stop();
  bot = undefined;
  server = undefined;
});

async function startBot(setup: (bot: Bot) => void): Promise<{ server: TelegramServer; bot: Bot }> {
  const s = createTelegramServer();
  server = s;
  const { apiRoot } = await s.start();
  const b = new Bot(s.token, { client: { apiRoot } });
  bot = b;
  setup(b);
  b.catch((err) => {
    throw err.error;
  });
  await new Promise<void>((resolve) => {
    void b.start({ onStart: () => resolve() });
  });
  return { server: s, bot: b };
}

describe('a real grammY bot against the sandbox', () => {
  it('polls, answers commands and text, and edits its reply with a keyboard', async () => {
    const { server } = await startBot((b) => {
      b.command('start', (ctx) => ctx.reply('<b>Welcome</b>', { parse_mode: 'HTML' }));
      b.on('message:text', async (ctx) => {
        await ctx.replyWithChatAction('typing');
        const placeholder = await ctx.reply('…', { reply_parameters: { message_id: ctx.msg.message_id } });
        await ctx.api.editMessageText(ctx.chat.id, placeholder.message_id, `echo: ${ctx.msg.text}`, {
          reply_markup: new InlineKeyboard().text('Again', 'again'),
        });
      });
      b.callbackQuery('again', (ctx) => ctx.answerCallbackQuery({ text: 'once more' }));
    });
    const chat = server.privateChat();

    server.sendText(chat.id, '/start');
    await server.waitFor(() => server.messages(chat.id).find((m) => m.html === '<b>Welcome</b>'));

    const question = server.sendText(chat.id, 'hello');
    const answer = await server.waitFor(() =>
      server.messages(chat.id).find((m) => m.from === 'bot' && m.text === 'echo: hello'),
    );
    expect(answer.replyToMessageId).toBe(question.messageId);
    expect(answer.history.map((v) => v.text)).toEqual(['…', 'echo: hello']);
    expect(server.chat(chat.id).actions.map((a) => a.action)).toEqual(['typing']);

    const press = server.pressButton(chat.id, answer.messageId, 'again');
    const answered = await server.waitFor(() => server.callbackQuery(press.id)?.answer);
    expect(answered.text).toBe('once more');
    expect(server.stats().requests).toMatchObject({
      sendMessage: 2,
      editMessageText: 1,
      answerCallbackQuery: 1,
    });
  });

  it("surfaces Telegram's errors to grammY as GrammyError", async () => {
    const { server, bot } = await startBot(() => {});
    const chat = server.privateChat();
    const error = await bot.api
      .sendMessage(chat.id, '<b>oops', { parse_mode: 'HTML' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrammyError);
    expect((error as GrammyError).description).toBe(
      'Bad Request: can\'t parse entities: Can\'t find end tag corresponding to start tag "b"',
    );
  });

  it('uploads a document with InputFile and downloads a user photo', async () => {
    const { server, bot } = await startBot(() => {});
    const chat = server.privateChat();
    await bot.api.sendDocument(chat.id, new InputFile(Buffer.from('report body'), 'report.md'), {
      caption: 'the report',
    });
    const doc = server.messages(chat.id)[0];
    expect(doc).toMatchObject({
      kind: 'document',
      text: 'the report',
      file: { fileName: 'report.md', size: 11 },
    });

    const photo = server.sendPhoto(chat.id, { data: Buffer.from('jpeg bytes') });
    const file = await bot.api.getFile(photo.file?.fileId ?? '');
    const res = await fetch(`${server.apiRoot}/file/bot${server.token}/${file.file_path}`);
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe('jpeg bytes');
  });

  it('sends an album with sendMediaGroup: one group id, the caption on the first, the bytes downloadable', async () => {
    const { server, bot } = await startBot(() => {});
    const chat = server.privateChat();
    const sent = await bot.api.sendMediaGroup(chat.id, [
      {
        type: 'document',
        media: new InputFile(Buffer.from('first'), 'a.txt'),
        caption: '<b>two</b> files',
        parse_mode: 'HTML',
      },
      { type: 'document', media: new InputFile(Buffer.from('second'), 'b.txt') },
    ]);
    expect(sent).toHaveLength(2);
    const group = sent.map((m) => (m as { media_group_id?: string }).media_group_id);
    expect(group[0]).toBeDefined();
    expect(group[1]).toBe(group[0]);
    const [first, second] = server.messages(chat.id);
    expect(first).toMatchObject({ kind: 'document', text: 'two files', file: { fileName: 'a.txt' } });
    expect(second).toMatchObject({ kind: 'document', text: '', file: { fileName: 'b.txt' } });
    const file = await bot.api.getFile(second?.file?.fileId ?? '');
    const res = await fetch(`${server.apiRoot}/file/bot${server.token}/${file.file_path}`);
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe('second');
  });

  it('refuses what Telegram refuses: one-item albums, mixed albums, a photo over 10 MB, a file over 50 MB', async () => {
    const { server, bot } = await startBot(() => {});
    const chat = server.privateChat();
    const doc = (name: string) => ({
      type: 'document' as const,
      media: new InputFile(Buffer.from(name), name),
    });
    await expect(bot.api.sendMediaGroup(chat.id, [doc('one')])).rejects.toThrow(/2 to 10 items/);
    await expect(
      bot.api.sendMediaGroup(chat.id, [
        doc('a'),
        { type: 'photo', media: new InputFile(Buffer.from('p'), 'p.jpg') },
      ] as unknown as InputMediaDocument[]),
    ).rejects.toThrow(/can't be mixed/);
    await expect(
      bot.api.sendPhoto(chat.id, new InputFile(Buffer.alloc(10 * 1024 * 1024 + 1), 'big.jpg')),
    ).rejects.toThrow(/file is too big/);
    const tooLarge = bot.api.sendDocument(
      chat.id,
      new InputFile(Buffer.alloc(50 * 1024 * 1024 + 1), 'big.bin'),
    );
    await expect(tooLarge).rejects.toMatchObject({ error_code: 413 });
    expect(server.messages(chat.id)).toHaveLength(0);
  });
});
