/**
 * Topics in private chats (Bot API 9.3) in the stand-in Telegram: `getMe` says whether the bot has
 * them; `createForumTopic` opens one in a private chat only then ("the chat is not a forum" otherwise);
 * messages and drafts carry `message_thread_id` into their topic, an unknown topic is "message thread
 * not found"; a user's message in a topic reaches the bot with `is_topic_message`; each topic's draft is
 * its own (a bot message in one topic does not end another's, and its stop button names its topic).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTelegramServer, type TelegramServer } from '../src/telegram/index.js';

let server: TelegramServer;
let apiRoot: string;

interface Reply<T = unknown> {
  ok: boolean;
  result?: T;
  error_code?: number;
  description?: string;
}

async function call<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<Reply<T>> {
  const res = await fetch(`${apiRoot}/bot${server.token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return (await res.json()) as Reply<T>;
}

async function start(privateTopics: boolean): Promise<void> {
  server = createTelegramServer({ webView: false, rateLimits: false, privateTopics });
  ({ apiRoot } = await server.start());
}

afterEach(async () => {
  await server.stop();
});

describe('topics in private chats', () => {
  it('without topic mode: getMe says so and createForumTopic in a private chat is refused as Telegram refuses it', async () => {
    await start(false);
    const me = await call<{ has_topics_enabled: boolean }>('getMe');
    expect(me.result?.has_topics_enabled).toBe(false);
    const chat = server.privateChat();
    expect(await call('createForumTopic', { chat_id: chat.id, name: 'x' })).toMatchObject({
      ok: false,
      error_code: 400,
      description: 'Bad Request: the chat is not a forum',
    });
    expect(() => server.createTopic(chat.id, 'mine')).toThrow(/privateTopics/);
    // A thread id the chat does not have is refused, not silently dropped into the main chat.
    expect(await call('sendMessage', { chat_id: chat.id, text: 'hi', message_thread_id: 9 })).toMatchObject({
      ok: false,
      description: 'Bad Request: message thread not found',
    });
  });

  it('with topic mode: the bot opens a topic, and its messages and drafts land in it', async () => {
    await start(false);
    server.setPrivateTopics(true);
    const me = await call<{ has_topics_enabled: boolean; allows_users_to_create_topics: boolean }>('getMe');
    expect(me.result).toMatchObject({ has_topics_enabled: true, allows_users_to_create_topics: true });
    const chat = server.privateChat();
    const created = await call<{ message_thread_id: number; name: string }>('createForumTopic', {
      chat_id: chat.id,
      name: 'Fresh start',
    });
    expect(created.ok).toBe(true);
    const threadId = created.result?.message_thread_id ?? 0;
    expect(created.result?.name).toBe('Fresh start');
    expect(server.chat(chat.id).chat.topics).toEqual([{ threadId, name: 'Fresh start' }]);
    const sent = await call<{ message_thread_id?: number; is_topic_message?: boolean }>('sendMessage', {
      chat_id: chat.id,
      text: 'in the topic',
      message_thread_id: threadId,
    });
    expect(sent.result).toMatchObject({ message_thread_id: threadId, is_topic_message: true });
    expect(server.messages(chat.id, { threadId }).map((m) => m.text)).toContain('in the topic');
    expect(
      await call('sendMessageDraft', {
        chat_id: chat.id,
        draft_id: 5,
        text: 'drafting',
        message_thread_id: threadId,
      }),
    ).toMatchObject({ ok: true });
    expect(server.chat(chat.id).drafts.at(-1)).toMatchObject({ threadId, text: 'drafting' });
    expect(
      await call('sendMessageDraft', {
        chat_id: chat.id,
        draft_id: 6,
        text: 'x',
        message_thread_id: threadId + 50,
      }),
    ).toMatchObject({ ok: false, description: 'Bad Request: message thread not found' });
    expect(await call('createForumTopic', { chat_id: chat.id, name: '' })).toMatchObject({ ok: false });
    expect(await call('createForumTopic', { chat_id: chat.id, name: 'n'.repeat(129) })).toMatchObject({
      ok: false,
    });
  });

  it('a user’s message in a topic reaches the bot with its thread id; drafts of two topics are each their own', async () => {
    await start(true);
    const chat = server.privateChat();
    const a = server.createTopic(chat.id, 'a');
    const b = server.createTopic(chat.id, 'b');
    server.sendText(chat.id, 'hello a', { threadId: a.threadId });
    const updates =
      await call<{ message?: { text?: string; message_thread_id?: number; is_topic_message?: boolean } }[]>(
        'getUpdates',
      );
    const message = updates.result?.find((u) => u.message?.text === 'hello a')?.message;
    expect(message).toMatchObject({ message_thread_id: a.threadId, is_topic_message: true });
    await call('sendMessageDraft', {
      chat_id: chat.id,
      draft_id: 1,
      text: 'A…',
      message_thread_id: a.threadId,
      can_stop: true,
    });
    await call('sendMessageDraft', {
      chat_id: chat.id,
      draft_id: 2,
      text: 'B…',
      message_thread_id: b.threadId,
      can_stop: true,
    });
    // The answer in topic a ends a's draft only.
    await call('sendMessage', { chat_id: chat.id, text: 'A done', message_thread_id: a.threadId });
    const drafts = server.chat(chat.id).drafts;
    expect(drafts.find((d) => d.draftId === 1)?.superseded).toBe(true);
    expect(drafts.find((d) => d.draftId === 2)?.superseded).toBeUndefined();
    expect(() => server.stopDraft(chat.id, { threadId: a.threadId })).toThrow(/no draft/);
    const stop = server.stopDraft(chat.id, { threadId: b.threadId });
    expect(stop).toMatchObject({ draftId: 2, threadId: b.threadId });
    const stopped = server.pendingUpdates().find((u) => 'stopped_message_generation' in u) as
      | { stopped_message_generation?: unknown }
      | undefined;
    expect(stopped?.stopped_message_generation).toMatchObject({ draft_id: 2, message_thread_id: b.threadId });
  });
});
