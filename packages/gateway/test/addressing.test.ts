import type { Message } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import {
  addressedToBot,
  isGroupChat,
  mentionsBot,
  repliedMessage,
  stripMention,
} from '../src/core/intake/addressing.js';

const bot = { id: 999, username: 'helper_bot' };
const group = { id: -100, type: 'supergroup', title: 'team' } as const;

function message(over: Partial<Message> & { text?: string }): Message {
  return {
    message_id: 10,
    date: 0,
    chat: group,
    from: { id: 1, is_bot: false, first_name: 'Ann' },
    ...over,
  } as Message;
}

describe('addressing in groups', () => {
  it('a mention of the bot, as an entity or as plain text, in any case', () => {
    const text = 'hey @helper_bot look';
    expect(mentionsBot(message({ text, entities: [{ type: 'mention', offset: 4, length: 11 }] }), bot)).toBe(
      true,
    );
    expect(mentionsBot(message({ text: 'hey @Helper_Bot' }), bot)).toBe(true);
    expect(mentionsBot(message({ text: 'hey @helper_bot_two' }), bot)).toBe(false);
    expect(mentionsBot(message({ text: 'mail me at x@helper_bot.com' }), bot)).toBe(false);
  });

  it('a reply to the bot, a command, or a mention is addressed; other talk is not', () => {
    const fromBot = message({
      message_id: 5,
      from: { id: 999, is_bot: true, first_name: 'Bot' },
      text: 'done',
    });
    expect(addressedToBot(message({ text: 'thanks', reply_to_message: fromBot as never }), bot)).toBe(true);
    expect(addressedToBot(message({ text: '/status' }), bot)).toBe(true);
    expect(addressedToBot(message({ text: 'lunch?' }), bot)).toBe(false);
    const fromAnn = message({ message_id: 6, text: 'hi' });
    expect(addressedToBot(message({ text: 'ok', reply_to_message: fromAnn as never }), bot)).toBe(false);
  });

  it("text that only starts with a slash is not addressed: a path, another bot's command", () => {
    expect(addressedToBot(message({ text: '/tmp/x is broken' }), bot)).toBe(false);
    expect(addressedToBot(message({ text: '/ban spammer' }), bot)).toBe(false);
    expect(addressedToBot(message({ text: '/status@other_bot' }), bot)).toBe(false);
    expect(addressedToBot(message({ text: '/usr/bin is full, @helper_bot' }), bot)).toBe(true);
    expect(addressedToBot(message({ text: '/STATUS' }), bot)).toBe(true);
    expect(addressedToBot(message({ text: '/model opus' }), bot)).toBe(true);
    expect(addressedToBot(message({ text: '/whatever@Helper_Bot' }), bot)).toBe(true);
  });

  it("a forum topic's root message is not a reply anyone wrote", () => {
    const root = message({ message_id: 22, from: { id: 999, is_bot: true, first_name: 'Bot' } });
    const inTopic = message({
      text: 'plain talk in the topic',
      is_topic_message: true,
      message_thread_id: 22,
      reply_to_message: root as never,
    });
    expect(repliedMessage(inTopic)).toBeUndefined();
    expect(addressedToBot(inTopic, bot)).toBe(false);
  });

  it('the mention is removed from what the model reads, and nothing else', () => {
    expect(stripMention('@helper_bot what is up', 'helper_bot')).toBe('what is up');
    expect(stripMention('so, @Helper_Bot, what now?', 'helper_bot')).toBe('so, , what now?');
    expect(stripMention('ping @helper_bot_two', 'helper_bot')).toBe('ping @helper_bot_two');
  });

  it('groups and supergroups are groups; private chats are not', () => {
    expect(isGroupChat(message({}))).toBe(true);
    expect(isGroupChat(message({ chat: { id: 1, type: 'private', first_name: 'Ann' } }))).toBe(false);
  });
});
