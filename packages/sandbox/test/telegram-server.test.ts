import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTelegramServer,
  type TelegramServer,
  type TelegramServerOptions,
} from '../src/telegram/index.js';

let server: TelegramServer;
let apiRoot: string;

async function open(options: TelegramServerOptions = {}): Promise<void> {
  server = createTelegramServer(options);
  ({ apiRoot } = await server.start());
}

interface Reply {
  ok: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

/** One Bot API call as grammY makes it: POST JSON to /bot<token>/<method>. */
async function call(
  method: string,
  params: Record<string, unknown> = {},
  token = server.token,
): Promise<Reply> {
  const res = await fetch(`${apiRoot}/bot${token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  const body = (await res.json()) as Reply;
  expect(res.status).toBe(body.ok ? 200 : body.error_code);
  return body;
}

async function ok<T = Record<string, unknown>>(
  method: string,
  params: Record<string, unknown> = {},
): Promise<T> {
  const reply = await call(method, params);
  if (!reply.ok) throw new Error(`${method} failed: ${reply.description}`);
  return reply.result as T;
}

afterEach(async () => {
  await server?.stop();
});

describe('identity and routing', () => {
  beforeEach(() => open({ token: '4242:secret' }));

  it('answers getMe with the bot named by the token', async () => {
    expect(await ok('getMe')).toMatchObject({ id: 4242, is_bot: true, username: 'switchyard_sandbox_bot' });
  });

  it('refuses a wrong token with 401 and an unknown method with 404', async () => {
    expect(await call('getMe', {}, '4242:wrong')).toEqual({
      ok: false,
      error_code: 401,
      description: 'Unauthorized',
    });
    expect(await call('frobnicate')).toEqual({ ok: false, error_code: 404, description: 'Not Found' });
  });

  it('takes method names case-insensitively and form-encoded bodies', async () => {
    const chat = server.privateChat();
    const res = await fetch(`${apiRoot}/bot${server.token}/SENDMESSAGE`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ chat_id: String(chat.id), text: 'hi' }).toString(),
    });
    expect(((await res.json()) as Reply).ok).toBe(true);
    expect(server.messages(chat.id).map((m) => m.text)).toEqual(['hi']);
  });
});

describe('getUpdates', () => {
  beforeEach(() => open());

  it('hands out updates until an offset confirms them', async () => {
    const chat = server.privateChat();
    server.sendText(chat.id, 'one');
    server.sendText(chat.id, 'two');
    const first = await ok<{ update_id: number; message: { text: string } }[]>('getUpdates');
    expect(first.map((u) => u.message.text)).toEqual(['one', 'two']);
    const again = await ok<{ update_id: number }[]>('getUpdates');
    expect(again).toHaveLength(2);
    const last = again[1]?.update_id ?? 0;
    expect(await ok<unknown[]>('getUpdates', { offset: last + 1 })).toEqual([]);
    expect(server.pendingUpdates()).toEqual([]);
  });

  it('long-polls until an update arrives', async () => {
    const chat = server.privateChat();
    const started = Date.now();
    const poll = ok<{ message: { text: string; chat: { id: number } } }[]>('getUpdates', { timeout: 10 });
    setTimeout(() => server.sendText(chat.id, 'wake up'), 100);
    const updates = await poll;
    expect(updates.map((u) => u.message.text)).toEqual(['wake up']);
    expect(updates[0]?.message.chat.id).toBe(chat.id);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('returns an empty list when the timeout passes', async () => {
    const started = Date.now();
    expect(await ok<unknown[]>('getUpdates', { timeout: 1 })).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('ends the older of two overlapping polls with 409 Conflict', async () => {
    const first = call('getUpdates', { timeout: 10 });
    await new Promise((r) => setTimeout(r, 50));
    const second = call('getUpdates', { timeout: 1 });
    expect(await first).toEqual({
      ok: false,
      error_code: 409,
      description:
        'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
    });
    expect(await second).toEqual({ ok: true, result: [] });
    expect(server.stats().conflicts).toBe(1);
  });

  it('answers a waiting poll and frees the port on stop()', async () => {
    const poll = call('getUpdates', { timeout: 30 });
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await server.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
    await expect(poll).resolves.toEqual({ ok: true, result: [] });
  });

  it('leaves no listening socket, timer or immediate behind after stop()', async () => {
    const ours = () =>
      process
        .getActiveResourcesInfo()
        .filter((r) => r === 'Timeout' || r === 'TCPServerWrap' || r === 'Immediate');
    await server.stop();
    const before = ours().length;
    await open();
    const chat = server.privateChat();
    const poll = call('getUpdates', { timeout: 30 });
    server.sendText(chat.id, 'queued');
    await poll;
    // A poll left waiting at stop() is answered; one still on its way in (a loaded machine) may see its
    // connection closed instead. Either is fine here: what this test guards is what stop() leaves behind.
    const second = call('getUpdates', { offset: 999, timeout: 30 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    await server.stop();
    await second;
    // Let the client side of the closed sockets settle (longer on a loaded machine); a leak never does.
    for (let waited = 0; ours().length > before && waited < 2000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(ours().length).toBeLessThanOrEqual(before);
  });

  it('marks commands with bot_command entities', async () => {
    const chat = server.privateChat();
    server.sendText(chat.id, '/model opus');
    const [update] = await ok<{ message: { entities: unknown[] } }[]>('getUpdates');
    expect(update?.message.entities).toEqual([{ type: 'bot_command', offset: 0, length: 6 }]);
  });
});

describe('sendMessage', () => {
  beforeEach(() => open());

  it('stores HTML as text plus entities and returns the message', async () => {
    const chat = server.privateChat();
    const sent = await ok<{ message_id: number; text: string; entities: unknown[] }>('sendMessage', {
      chat_id: chat.id,
      text: '<b>Hello</b> &amp; welcome',
      parse_mode: 'HTML',
    });
    expect(sent).toMatchObject({
      text: 'Hello & welcome',
      entities: [{ type: 'bold', offset: 0, length: 5 }],
    });
    const [message] = server.messages(chat.id);
    expect(message).toMatchObject({
      from: 'bot',
      text: 'Hello & welcome',
      html: '<b>Hello</b> &amp; welcome',
    });
  });

  it("refuses bad HTML with Telegram's text", async () => {
    const chat = server.privateChat();
    expect(await call('sendMessage', { chat_id: chat.id, text: '<b>x</i>', parse_mode: 'HTML' })).toEqual({
      ok: false,
      error_code: 400,
      description:
        'Bad Request: can\'t parse entities: Unmatched end tag at byte offset 4, expected "</b>", found "</i>"',
    });
  });

  it('counts the 4096 limit after entity parsing', async () => {
    const chat = server.privateChat();
    const fits = `<b>${'a'.repeat(4096)}</b>`;
    expect((await call('sendMessage', { chat_id: chat.id, text: fits, parse_mode: 'HTML' })).ok).toBe(true);
    expect(await call('sendMessage', { chat_id: chat.id, text: 'a'.repeat(4097) })).toMatchObject({
      error_code: 400,
      description: 'Bad Request: message is too long',
    });
    expect(await call('sendMessage', { chat_id: chat.id, text: '  \n ' })).toMatchObject({
      description: 'Bad Request: message text is empty',
    });
  });

  it('refuses unknown chats and missing reply targets', async () => {
    expect(await call('sendMessage', { chat_id: 999, text: 'x' })).toMatchObject({
      description: 'Bad Request: chat not found',
    });
    const chat = server.privateChat();
    expect(
      await call('sendMessage', { chat_id: chat.id, text: 'x', reply_parameters: { message_id: 77 } }),
    ).toMatchObject({ description: 'Bad Request: message to be replied not found' });
    const user = server.sendText(chat.id, 'question');
    const reply = await ok<{ reply_to_message: { message_id: number } }>('sendMessage', {
      chat_id: chat.id,
      text: 'answer',
      reply_parameters: { message_id: user.messageId },
    });
    expect(reply.reply_to_message.message_id).toBe(user.messageId);
    expect(server.message(chat.id, user.messageId + 1)?.replyToMessageId).toBe(user.messageId);
  });

  it('places messages in forum topics and refuses unknown topics', async () => {
    const forum = server.createGroup({ title: 'Team', forum: true, topics: ['build'] });
    const topic = forum.topics[0];
    if (!topic) throw new Error('no topic');
    const sent = await ok<{ message_thread_id: number; is_topic_message: boolean }>('sendMessage', {
      chat_id: forum.id,
      message_thread_id: topic.threadId,
      text: 'in topic',
    });
    expect(sent).toMatchObject({ message_thread_id: topic.threadId, is_topic_message: true });
    expect(server.messages(forum.id, { threadId: topic.threadId }).map((m) => m.text)).toContain('in topic');
    expect(
      await call('sendMessage', { chat_id: forum.id, message_thread_id: 9999, text: 'x' }),
    ).toMatchObject({ description: 'Bad Request: message thread not found' });
    const user = server.sendText(forum.id, 'from user', { threadId: topic.threadId });
    expect(user.threadId).toBe(topic.threadId);
  });

  it('validates inline keyboards', async () => {
    const chat = server.privateChat();
    expect(
      await call('sendMessage', {
        chat_id: chat.id,
        text: 'x',
        reply_markup: { inline_keyboard: [[{ text: 'a', callback_data: 'x'.repeat(65) }]] },
      }),
    ).toMatchObject({ description: 'Bad Request: BUTTON_DATA_INVALID' });
    expect(
      await call('sendMessage', {
        chat_id: chat.id,
        text: 'x',
        reply_markup: { inline_keyboard: [[{ text: 'a' }]] },
      }),
    ).toMatchObject({ error_code: 400 });
  });
});

describe('editing and deleting', () => {
  beforeEach(() => open());

  it('keeps every version, refuses a no-op edit, and drops the keyboard when an edit omits it', async () => {
    const chat = server.privateChat();
    const keyboard = { inline_keyboard: [[{ text: 'Stop', callback_data: 'stop' }]] };
    const sent = await ok<{ message_id: number }>('sendMessage', {
      chat_id: chat.id,
      text: 'v1',
      reply_markup: keyboard,
    });
    const id = sent.message_id;
    await ok('editMessageText', {
      chat_id: chat.id,
      message_id: id,
      text: '<i>v2</i>',
      parse_mode: 'HTML',
      reply_markup: keyboard,
    });
    expect(
      await call('editMessageText', {
        chat_id: chat.id,
        message_id: id,
        text: '<i>v2</i>',
        parse_mode: 'HTML',
        reply_markup: keyboard,
      }),
    ).toEqual({
      ok: false,
      error_code: 400,
      description:
        'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
    });
    await ok('editMessageText', { chat_id: chat.id, message_id: id, text: '<i>v2</i>', parse_mode: 'HTML' });
    const message = server.message(chat.id, id);
    expect(message?.history.map((v) => [v.html, v.replyMarkup !== undefined])).toEqual([
      ['v1', true],
      ['<i>v2</i>', true],
      ['<i>v2</i>', false],
    ]);
    expect(message?.replyMarkup).toBeUndefined();
  });

  it('edits the keyboard alone and refuses the same keyboard again', async () => {
    const chat = server.privateChat();
    const { message_id } = await ok<{ message_id: number }>('sendMessage', { chat_id: chat.id, text: 'x' });
    const keyboard = { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] };
    await ok('editMessageReplyMarkup', { chat_id: chat.id, message_id, reply_markup: keyboard });
    expect(
      await call('editMessageReplyMarkup', { chat_id: chat.id, message_id, reply_markup: keyboard }),
    ).toMatchObject({
      description: expect.stringContaining('message is not modified'),
    });
    expect(server.message(chat.id, message_id)?.replyMarkup).toEqual(keyboard);
  });

  it('refuses edits of missing, deleted or foreign messages and marks deletions', async () => {
    const chat = server.privateChat();
    const user = server.sendText(chat.id, 'mine');
    expect(
      await call('editMessageText', { chat_id: chat.id, message_id: user.messageId, text: 'x' }),
    ).toMatchObject({
      description: "Bad Request: message can't be edited",
    });
    const { message_id } = await ok<{ message_id: number }>('sendMessage', { chat_id: chat.id, text: 'x' });
    expect(await ok('deleteMessage', { chat_id: chat.id, message_id })).toBe(true);
    expect(await call('deleteMessage', { chat_id: chat.id, message_id })).toMatchObject({
      description: 'Bad Request: message to delete not found',
    });
    expect(await call('editMessageText', { chat_id: chat.id, message_id, text: 'y' })).toMatchObject({
      description: 'Bad Request: message to edit not found',
    });
    const more = await ok<{ message_id: number }>('sendMessage', { chat_id: chat.id, text: 'y' });
    expect(await ok('deleteMessages', { chat_id: chat.id, message_ids: [more.message_id, 9999] })).toBe(true);
    const view = server.chat(chat.id);
    expect(view.deleted.map((m) => m.messageId)).toEqual([message_id, more.message_id]);
    expect(view.messages.map((m) => m.text)).toEqual(['mine']);
  });
});

describe('pins', () => {
  beforeEach(() => open());

  it('pins silently, shows the latest pin in getChat, and unpins', async () => {
    const chat = server.privateChat();
    const a = await ok<{ message_id: number }>('sendMessage', { chat_id: chat.id, text: 'card A' });
    const b = await ok<{ message_id: number }>('sendMessage', { chat_id: chat.id, text: 'card B' });
    await ok('pinChatMessage', { chat_id: chat.id, message_id: a.message_id, disable_notification: true });
    await ok('pinChatMessage', { chat_id: chat.id, message_id: b.message_id, disable_notification: true });
    const notices = server.messages(chat.id).filter((m) => m.service?.type === 'pinned_message');
    expect(notices.map((m) => m.silent)).toEqual([true, true]);
    const info = await ok<{ pinned_message: { message_id: number; text: string } }>('getChat', {
      chat_id: chat.id,
    });
    expect(info.pinned_message).toMatchObject({ message_id: b.message_id, text: 'card B' });
    expect(server.chat(chat.id).pinned.map((m) => m.text)).toEqual(['card A', 'card B']);
    await ok('unpinChatMessage', { chat_id: chat.id, message_id: b.message_id });
    expect(await call('unpinChatMessage', { chat_id: chat.id, message_id: b.message_id })).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: message to unpin not found',
    });
    const after = await ok<{ pinned_message?: { message_id: number } }>('getChat', { chat_id: chat.id });
    expect(after.pinned_message?.message_id).toBe(a.message_id);
    await ok('unpinAllChatMessages', { chat_id: chat.id });
    expect(await ok('getChat', { chat_id: chat.id })).not.toHaveProperty('pinned_message');
  });

  it('refuses to pin in a group where the bot lacks the right', async () => {
    const group = server.createGroup({ title: 'No rights', botCanPin: false });
    const m = await ok<{ message_id: number }>('sendMessage', { chat_id: group.id, text: 'x' });
    expect(await call('pinChatMessage', { chat_id: group.id, message_id: m.message_id })).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: not enough rights to manage pinned messages in the chat',
    });
    server.setBotCanPin(group.id, true);
    expect(await ok('pinChatMessage', { chat_id: group.id, message_id: m.message_id })).toBe(true);
  });

  it("shows a user's pin to the bot and keeps it apart from the bot's", async () => {
    const chat = server.privateChat();
    const user = server.sendText(chat.id, 'remember this');
    server.pinAsUser(chat.id, user.messageId);
    const info = await ok<{ pinned_message: { message_id: number; from: { is_bot: boolean } } }>('getChat', {
      chat_id: chat.id,
    });
    expect(info.pinned_message).toMatchObject({ message_id: user.messageId, from: { is_bot: false } });
  });
});

describe('callback queries', () => {
  beforeEach(() => open());

  it('delivers a press and records the answer once', async () => {
    const chat = server.privateChat();
    const sent = await ok<{ message_id: number }>('sendMessage', {
      chat_id: chat.id,
      text: 'Allow?',
      reply_markup: { inline_keyboard: [[{ text: 'Allow', callback_data: 'allow:1' }]] },
    });
    const query = server.pressButton(chat.id, sent.message_id, { text: 'Allow' });
    const [update] =
      await ok<{ callback_query: { id: string; data: string; message: { message_id: number } } }[]>(
        'getUpdates',
      );
    expect(update?.callback_query).toMatchObject({
      id: query.id,
      data: 'allow:1',
      message: { message_id: sent.message_id },
    });
    await ok('answerCallbackQuery', { callback_query_id: query.id, text: 'Allowed' });
    expect(server.callbackQuery(query.id)?.answer).toMatchObject({ text: 'Allowed', showAlert: false });
    expect(await call('answerCallbackQuery', { callback_query_id: query.id })).toMatchObject({
      description: 'Bad Request: query is too old and response timeout expired or query ID is invalid',
    });
    expect(() => server.pressButton(chat.id, sent.message_id, 'nope')).toThrow(/no callback button/);
    expect(server.pressButton(chat.id, sent.message_id, 'nope', { force: true }).data).toBe('nope');
  });
});

describe('rate limits', () => {
  it('answers 429 with retry_after when a private chat bursts, and counts edits', async () => {
    await open({ rateLimits: { privateChat: { burst: 2, perSecond: 1 } } });
    const chat = server.privateChat();
    const first = await ok<{ message_id: number }>('sendMessage', { chat_id: chat.id, text: '1' });
    await ok('editMessageText', { chat_id: chat.id, message_id: first.message_id, text: '1b' });
    expect(await call('sendMessage', { chat_id: chat.id, text: '3' })).toEqual({
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 1',
      parameters: { retry_after: 1 },
    });
    expect(server.stats().tooManyRequests).toBe(1);
    // Another chat has its own budget.
    const other = server.privateChat(server.addUser({ firstName: 'Other' }));
    expect((await call('sendMessage', { chat_id: other.id, text: 'x' })).ok).toBe(true);
  });

  it('applies the group limit as a window (a burst, then 429 until the oldest leaves), and can be switched off', async () => {
    let clock = 1_000_000;
    await open({
      now: () => clock,
      // Three in any 9 s.
      rateLimits: { groupChat: { burst: 3, perSecond: 20 / 60 }, global: { burst: 5, perSecond: 30 } },
    });
    const group = server.createGroup({ title: 'g' });
    for (let i = 0; i < 3; i++) await ok('sendMessage', { chat_id: group.id, text: `m${i}` });
    expect(await call('sendMessage', { chat_id: group.id, text: 'x' })).toMatchObject({
      error_code: 429,
      parameters: { retry_after: 9 },
    });
    clock += 8_000;
    expect((await call('sendMessage', { chat_id: group.id, text: 'x' })).ok).toBe(false);
    clock += 1_000;
    expect((await call('sendMessage', { chat_id: group.id, text: 'x' })).ok).toBe(true);
    server.setRateLimits(false);
    for (let i = 0; i < 10; i++) await ok('sendMessage', { chat_id: group.id, text: `n${i}` });
  });

  it('gives reactions a window of their own: they spend no message slot, and 429 past the window', async () => {
    let clock = 1_000_000;
    await open({
      now: () => clock,
      rateLimits: { reaction: { burst: 2, perSecond: 1 }, privateChat: { burst: 1, perSecond: 1 } },
    });
    const chat = server.privateChat();
    const asked = server.sendText(chat.id, 'hi');
    const react = (emoji: string) =>
      call('setMessageReaction', {
        chat_id: chat.id,
        message_id: asked.messageId,
        reaction: JSON.stringify([{ type: 'emoji', emoji }]),
      });
    expect((await react('👀')).ok).toBe(true);
    expect((await react('✍')).ok).toBe(true);
    expect(await react('👌')).toMatchObject({ error_code: 429, parameters: { retry_after: 2 } });
    // The chat's one message slot is still there.
    await ok('sendMessage', { chat_id: chat.id, text: 'answer' });
    clock += 2_000;
    expect((await react('👌')).ok).toBe(true);
    expect(server.message(chat.id, asked.messageId)?.reactions).toEqual(['👌']);
  });
});

describe('reactions', () => {
  beforeEach(() => open());

  it('refuses with REACTION_INVALID an emoji bots may not set, or one the chat does not allow', async () => {
    const group = server.createGroup({ title: 'g', availableReactions: ['👍'] });
    const asked = server.sendText(group.id, 'hi');
    const react = (emoji: string) =>
      call('setMessageReaction', {
        chat_id: group.id,
        message_id: asked.messageId,
        reaction: JSON.stringify([{ type: 'emoji', emoji }]),
      });
    expect(await react('👀')).toMatchObject({ ok: false, description: 'Bad Request: REACTION_INVALID' });
    expect((await react('👍')).ok).toBe(true);
    server.setAvailableReactions(group.id, undefined);
    expect((await react('👀')).ok).toBe(true);
    expect(await react('🦖')).toMatchObject({ ok: false, description: 'Bad Request: REACTION_INVALID' });
    const chat = (await call('getChat', { chat_id: group.id })) as {
      result: { available_reactions?: unknown };
    };
    expect(chat.result.available_reactions).toBeUndefined();
  });
});

describe('files', () => {
  beforeEach(() => open());

  it('serves a user photo and document through getFile and the file route', async () => {
    const chat = server.privateChat();
    server.sendPhoto(chat.id, { data: new Uint8Array([1, 2, 3]), caption: 'look', width: 800, height: 600 });
    server.sendDocument(chat.id, {
      data: Buffer.from('hello'),
      fileName: 'notes.txt',
      mimeType: 'text/plain',
    });
    const updates =
      await ok<
        {
          message: {
            caption?: string;
            photo?: { file_id: string; width: number }[];
            document?: { file_id: string; file_name: string };
          };
        }[]
      >('getUpdates');
    const photo = updates[0]?.message.photo ?? [];
    expect(photo.map((p) => p.width)).toEqual([90, 800]);
    expect(updates[0]?.message.caption).toBe('look');
    const doc = updates[1]?.message.document;
    expect(doc?.file_name).toBe('notes.txt');
    const file = await ok<{ file_path: string; file_size: number }>('getFile', { file_id: doc?.file_id });
    expect(file.file_size).toBe(5);
    const res = await fetch(`${apiRoot}/file/bot${server.token}/${file.file_path}`);
    expect(await res.text()).toBe('hello');
    expect(await call('getFile', { file_id: 'nope' })).toMatchObject({
      description: 'Bad Request: invalid file_id',
    });
  });

  it('refuses files over the download limit', async () => {
    await server.stop();
    await open({ maxDownloadBytes: 4 });
    const chat = server.privateChat();
    const m = server.sendDocument(chat.id, { data: Buffer.from('12345'), fileName: 'big.bin' });
    expect(await call('getFile', { file_id: m.file?.fileId })).toMatchObject({
      description: 'Bad Request: file is too big',
    });
  });

  it('accepts a multipart document upload from the bot', async () => {
    const chat = server.privateChat();
    const form = new FormData();
    form.set('chat_id', String(chat.id));
    form.set('caption', '<b>report</b>');
    form.set('parse_mode', 'HTML');
    form.set('document', new Blob(['data!']), 'report.txt');
    const res = await fetch(`${apiRoot}/bot${server.token}/sendDocument`, { method: 'POST', body: form });
    const body = (await res.json()) as Reply;
    expect(body.ok).toBe(true);
    const [message] = server.messages(chat.id);
    expect(message).toMatchObject({ kind: 'document', text: 'report', html: '<b>report</b>' });
    expect(message?.file?.fileName).toBe('report.txt');
  });
});

describe('chat actions, drafts, commands and events', () => {
  beforeEach(() => open());

  it('records actions and drafts, and refuses unknown actions and drafts outside private chats', async () => {
    const chat = server.privateChat();
    await ok('sendChatAction', { chat_id: chat.id, action: 'typing' });
    expect(await call('sendChatAction', { chat_id: chat.id, action: 'dancing' })).toMatchObject({
      description: 'Bad Request: wrong parameter action in request',
    });
    await ok('sendMessageDraft', {
      chat_id: chat.id,
      draft_id: 7,
      text: '<b>Thinking</b>',
      parse_mode: 'HTML',
    });
    const view = server.chat(chat.id);
    expect(view.actions.map((a) => a.action)).toEqual(['typing']);
    expect(view.drafts).toMatchObject([{ draftId: 7, text: 'Thinking', html: '<b>Thinking</b>' }]);
    const group = server.createGroup({ title: 'g' });
    expect((await call('sendMessageDraft', { chat_id: group.id, draft_id: 1, text: 'x' })).ok).toBe(false);
  });

  it("ends the draft at the bot's next message, so a reloaded view shows no stale draft or stop button", async () => {
    const chat = server.privateChat();
    await ok('sendMessageDraft', { chat_id: chat.id, draft_id: 3, text: 'half an answ', can_stop: true });
    expect(server.chat(chat.id).drafts.at(-1)?.superseded).toBeUndefined();
    await ok('sendMessage', { chat_id: chat.id, text: 'half an answer, whole' });
    expect(server.chat(chat.id).drafts.at(-1)).toMatchObject({ draftId: 3, superseded: true });
    await ok('sendMessageDraft', { chat_id: chat.id, draft_id: 4, text: 'the next one' });
    expect(server.chat(chat.id).drafts.at(-1)?.superseded).toBeUndefined();
  });

  it('keeps commands per scope', async () => {
    const commands = [{ command: 'stop', description: 'Interrupt the agent' }];
    await ok('setMyCommands', { commands });
    expect(await ok('getMyCommands')).toEqual(commands);
    expect(await ok('getMyCommands', { scope: { type: 'all_private_chats' } })).toEqual([]);
    expect(
      await call('setMyCommands', { commands: [{ command: 'Bad-Name', description: 'x' }] }),
    ).toMatchObject({
      description: 'Bad Request: BOT_COMMAND_INVALID',
    });
  });

  it('streams changes to subscribers and resolves waitFor on them', async () => {
    const chat = server.privateChat();
    const seen: string[] = [];
    const unsubscribe = server.subscribe((e) => seen.push(e.type));
    const waiting = server.waitFor(() => server.messages(chat.id).find((m) => m.text === 'done'));
    await ok('sendMessage', { chat_id: chat.id, text: 'done' });
    expect((await waiting).from).toBe('bot');
    unsubscribe();
    expect(seen).toEqual(['message', 'api_call']);
  });

  it('fails the next calls as told, then recovers', async () => {
    const chat = server.privateChat();
    const m = await ok<{ message_id: number }>('sendMessage', { chat_id: chat.id, text: 'card' });
    server.failNext('pinChatMessage', {
      errorCode: 429,
      description: 'Too Many Requests: retry after 5',
      retryAfter: 5,
    });
    expect(await call('pinChatMessage', { chat_id: chat.id, message_id: m.message_id })).toEqual({
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 5',
      parameters: { retry_after: 5 },
    });
    expect(await ok('pinChatMessage', { chat_id: chat.id, message_id: m.message_id })).toBe(true);
    expect(server.stats().requests.pinChatMessage).toBe(2);
  });
});
