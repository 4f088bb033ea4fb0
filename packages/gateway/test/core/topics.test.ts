import { describe, expect, it } from 'vitest';
import { newConversation, TOPIC_NAME_LIMIT, topicName } from '../../src/core/commands/topics.js';

const AT = '2026-12-01T23:05:42.123Z';

describe('what /new does', () => {
  it.each([
    ['a private chat whose bot has topics: a new topic', { chatId: 5 }, true, 'topic'],
    ['a topic of such a private chat: another new topic', { chatId: 5, threadId: 9 }, true, 'topic'],
    ['a private chat without topics: a fresh start in place', { chatId: 5 }, false, 'clear'],
    ['a group, topics or not: a fresh start in place', { chatId: -100 }, true, 'clear'],
    ['a forum topic: a fresh start in place', { chatId: -100, threadId: 3 }, true, 'clear'],
  ] as const)('%s', (_name, route, topics, kind) => {
    expect(newConversation(route, topics, AT).kind).toBe(kind);
  });

  it('names the topic by its time, within Telegram’s limit', () => {
    expect(newConversation({ chatId: 5 }, true, AT)).toEqual({
      kind: 'topic',
      name: 'New conversation · 2026-12-01 23:05 UTC',
    });
    expect(topicName('not a time')).toBe('New conversation');
    expect(topicName(AT).length).toBeLessThanOrEqual(TOPIC_NAME_LIMIT);
  });
});
