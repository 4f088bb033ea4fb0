/**
 * Topics in private chats at the gateway (the stand-in Telegram with `privateTopics`, a fake bridge):
 * `/new` opens a new topic with `createForumTopic` and leaves the conversation it was sent in alone (no
 * `clear` reaches the bridge); a message in the new topic is a conversation of its own (its route carries
 * the topic); a refused topic falls back to today's `/new`, said in the chat.
 */
import { describe, expect, it } from 'vitest';
import { botMessage, botMessages, connectBridge, framesOf, sleep, startWorld, waitUntil } from './harness.js';

describe('private-chat topics', () => {
  it('/new in a private chat with topics opens a new topic and leaves the old conversation where it was', async () => {
    const world = await startWorld({}, { privateTopics: true });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/new');
    const opened = await botMessage(tg, chatId, (t) => t.startsWith('Opened a new topic'));
    const [topic] = tg.chat(chatId).chat.topics;
    if (!topic) throw new Error('no topic was created');
    expect(topic.name).toMatch(/^New conversation · \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    expect(opened.text).toContain(topic.name);
    expect(opened.threadId).toBeUndefined();
    // The new topic greets; the old conversation was not cleared.
    const welcome = await botMessage(tg, chatId, (t) => t.startsWith('A fresh conversation'));
    expect(welcome.threadId).toBe(topic.threadId);
    await sleep(200);
    expect(framesOf(bridge, 'clear')).toEqual([]);
    // What is written in the topic is that topic's conversation.
    tg.sendText(chatId, 'hello in the topic', { threadId: topic.threadId });
    const message = await waitUntil(() =>
      framesOf(bridge, 'user_message').find((f) => f.text === 'hello in the topic'),
    );
    expect(message.route).toEqual({ chatId, threadId: topic.threadId });
    // /new inside the topic opens yet another one.
    tg.sendText(chatId, '/new', { threadId: topic.threadId });
    await tg.waitFor(() => tg.chat(chatId).chat.topics.length === 2);
  });

  it('/new where Telegram refuses the topic: this conversation starts anew, as without topics, and the chat is told why', async () => {
    const world = await startWorld({}, { privateTopics: true });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.failNext('createForumTopic', { description: 'Bad Request: the chat is not a forum' });
    tg.sendText(chatId, '/new');
    const clear = await waitUntil(() => framesOf(bridge, 'clear')[0]);
    expect(clear.route).toEqual({ chatId });
    await botMessage(tg, chatId, (t) =>
      t.includes('I could not open a new topic (Bad Request: the chat is not a forum)'),
    );
    expect(tg.chat(chatId).chat.topics).toEqual([]);
  });

  it('/new without topics keeps today’s behaviour: the conversation is cleared in place, no topic', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/new');
    await waitUntil(() => framesOf(bridge, 'clear')[0]);
    await botMessage(tg, chatId, (t) => t === 'Starting a new conversation…');
    expect(tg.calls('createForumTopic')).toEqual([]);
    expect(botMessages(tg, chatId).some((m) => m.text.startsWith('Opened'))).toBe(false);
  });
});
