import { afterEach, describe, expect, it } from 'vitest';
import { createTelegramServer, type NewerApiPart, type TelegramServer } from '../src/telegram/index.js';

let server: TelegramServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** A server (optionally an older one), and a raw Bot API call against it. */
async function open(lacks: NewerApiPart[] = []) {
  const s = createTelegramServer({ rateLimits: false, lacks });
  server = s;
  const { apiRoot } = await s.start();
  const call = async (method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${apiRoot}/bot${s.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
    });
    return (await res.json()) as {
      ok: boolean;
      error_code?: number;
      description?: string;
      result?: Record<string, unknown>;
    };
  };
  return { s, call };
}

describe('keep_on_stop (Bot API 10.3)', () => {
  it('a draft sent with keep_on_stop stays shown after the stop press; one without it is gone', async () => {
    const { s, call } = await open();
    const chat = s.privateChat().id;
    await call('sendMessageDraft', {
      chat_id: chat,
      draft_id: 7,
      text: 'half an answer',
      can_stop: true,
      keep_on_stop: true,
    });
    s.stopDraft(chat);
    const kept = s.chat(chat).drafts.at(-1);
    expect(kept).toMatchObject({ keepOnStop: true, text: 'half an answer' });
    expect(kept?.stoppedAt).toBeDefined();
    expect(kept?.superseded).toBeUndefined();
    // A stopped draft has no stop button any more.
    expect(() => s.stopDraft(chat)).toThrow(/no draft with a stop button/);
    // The bot's next message ends it, as any draft.
    await call('sendMessage', { chat_id: chat, text: 'half an answer' });
    expect(s.chat(chat).drafts.at(-1)?.superseded).toBe(true);

    await call('sendMessageDraft', { chat_id: chat, draft_id: 8, text: 'another', can_stop: true });
    s.stopDraft(chat);
    expect(s.chat(chat).drafts.at(-1)).toMatchObject({ superseded: true });
  });

  it('an older server ignores keep_on_stop, as Telegram ignores parameters it does not know', async () => {
    const { s, call } = await open(['keep_on_stop']);
    const chat = s.privateChat().id;
    const sent = await call('sendMessageDraft', {
      chat_id: chat,
      draft_id: 7,
      text: 'x',
      can_stop: true,
      keep_on_stop: true,
    });
    expect(sent.ok).toBe(true);
    s.stopDraft(chat);
    expect(s.chat(chat).drafts.at(-1)).toMatchObject({ superseded: true });
    expect(s.chat(chat).drafts.at(-1)?.keepOnStop).toBeUndefined();
  });
});

describe('disabled buttons (Bot API 10.3)', () => {
  const keyboard = {
    inline_keyboard: [
      [
        { text: '⏹ Stopped 1', disabled: {} },
        { text: '♻️ Reset 1', callback_data: 'r1' },
      ],
    ],
  };

  it('are kept on the message and cannot be pressed', async () => {
    const { s, call } = await open();
    const chat = s.privateChat().id;
    const sent = await call('sendMessage', { chat_id: chat, text: 'list', reply_markup: keyboard });
    expect(sent.ok).toBe(true);
    const id = sent.result?.message_id as number;
    expect(s.message(chat, id)?.replyMarkup?.inline_keyboard[0]?.[0]).toEqual({
      text: '⏹ Stopped 1',
      disabled: {},
    });
    expect(() => s.pressButton(chat, id, { text: '⏹ Stopped 1' })).toThrow(/disabled/);
    expect(s.pressButton(chat, id, 'r1').data).toBe('r1');
  });

  it('refuses a disabled field that is not a DisabledButton object', async () => {
    const { s, call } = await open();
    const chat = s.privateChat().id;
    const sent = await call('sendMessage', {
      chat_id: chat,
      text: 'x',
      reply_markup: { inline_keyboard: [[{ text: 'a', disabled: true }]] },
    });
    expect(sent).toMatchObject({ ok: false, error_code: 400 });
  });

  it('an older server refuses one as a text button, in sends and in edits', async () => {
    const { s, call } = await open(['disabled_buttons']);
    const chat = s.privateChat().id;
    const sent = await call('sendMessage', { chat_id: chat, text: 'list', reply_markup: keyboard });
    expect(sent).toMatchObject({
      ok: false,
      error_code: 400,
      description:
        "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard",
    });
    const plain = await call('sendMessage', { chat_id: chat, text: 'list' });
    const edit = await call('editMessageReplyMarkup', {
      chat_id: chat,
      message_id: plain.result?.message_id,
      reply_markup: keyboard,
    });
    expect(edit).toMatchObject({ ok: false, error_code: 400 });
  });
});

describe('ephemeral messages (Bot API 10.2/10.3)', () => {
  it('a message with ephemeral_message_parameters is only its receiver’s: message_id 0, receiver_user, ephemeral_message_id', async () => {
    const { s, call } = await open();
    const eve = s.addUser({ firstName: 'Eve' });
    const group = s.createGroup({ title: 'team', supergroup: true });
    const sent = await call('sendMessage', {
      chat_id: group.id,
      text: 'only for Eve',
      ephemeral_message_parameters: { receiver_user_id: eve.id },
    });
    expect(sent.ok).toBe(true);
    expect(sent.result).toMatchObject({ message_id: 0, receiver_user: { id: eve.id } });
    expect(sent.result?.ephemeral_message_id).toBeGreaterThan(0);
    const stored = s.messages(group.id).find((m) => m.text === 'only for Eve');
    expect(stored?.ephemeral?.receiver.id).toBe(eve.id);
  });

  it('refuses parameters without a known receiver, and a callback_query_id that is not the receiver’s press', async () => {
    const { s, call } = await open();
    const eve = s.addUser({ firstName: 'Eve' });
    const group = s.createGroup({ title: 'team', supergroup: true });
    const send = (parameters: unknown) =>
      call('sendMessage', { chat_id: group.id, text: 'x', ephemeral_message_parameters: parameters });
    expect(await send({})).toMatchObject({
      ok: false,
      description: 'Bad Request: receiver_user_id is empty',
    });
    expect(await send({ receiver_user_id: 42 })).toMatchObject({
      ok: false,
      description: 'Bad Request: user not found',
    });
    expect(await send({ receiver_user_id: eve.id, callback_query_id: 'nope' })).toMatchObject({ ok: false });
    const prompt = await call('sendMessage', {
      chat_id: group.id,
      text: 'press',
      reply_markup: { inline_keyboard: [[{ text: 'go', callback_data: 'go' }]] },
    });
    const press = s.pressButton(group.id, prompt.result?.message_id as number, 'go', { from: eve });
    expect((await send({ receiver_user_id: eve.id, callback_query_id: press.id })).ok).toBe(true);
    expect(await send({ receiver_user_id: s.defaultUser.id, callback_query_id: press.id })).toMatchObject({
      ok: false,
    });
  });

  it('an older server ignores the parameters: the message is an ordinary one everyone sees', async () => {
    const { s, call } = await open(['ephemeral_messages']);
    const eve = s.addUser({ firstName: 'Eve' });
    const group = s.createGroup({ title: 'team', supergroup: true });
    const sent = await call('sendMessage', {
      chat_id: group.id,
      text: 'meant for Eve',
      ephemeral_message_parameters: { receiver_user_id: eve.id },
    });
    expect(sent.ok).toBe(true);
    expect(sent.result?.message_id).toBeGreaterThan(0);
    expect(sent.result?.receiver_user).toBeUndefined();
    expect(s.messages(group.id).find((m) => m.text === 'meant for Eve')?.ephemeral).toBeUndefined();
  });
});
