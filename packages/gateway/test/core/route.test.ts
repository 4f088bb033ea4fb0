import { describe, expect, it } from 'vitest';
import { FRAME_OWNER, ownerOf } from '../../src/core/bridge/frame-owner.js';
import {
  laneKey,
  laneOfUpdate,
  routeOfMessage,
  routeOfStoppedDraft,
  threadParams,
} from '../../src/core/intake/route.js';

describe('route', () => {
  it.each([
    ['a private chat', { chat: { id: 5 } }, { chatId: 5 }],
    [
      'a forum topic',
      { chat: { id: -100 }, message_thread_id: 7, is_topic_message: true },
      { chatId: -100, threadId: 7 },
    ],
    // A reply thread in a plain group carries a thread id but is not a conversation of its own.
    ['a reply thread in a group', { chat: { id: -100 }, message_thread_id: 7 }, { chatId: -100 }],
    [
      'a private-chat topic',
      { chat: { id: 5 }, message_thread_id: 3, is_topic_message: true },
      { chatId: 5, threadId: 3 },
    ],
  ])('routes %s', (_name, message, route) => {
    expect(routeOfMessage(message)).toEqual(route);
  });

  it('keys a lane the way the protocol keys a conversation', () => {
    expect(laneKey({ chatId: -100, threadId: 7 })).toBe('-100:7');
    expect(laneKey({ chatId: 5 })).toBe('5');
  });

  it('puts a stopped draft, a press and a message of one topic in one lane', () => {
    const topic = { chat: { id: -100 }, message_thread_id: 7, is_topic_message: true };
    const lanes = [
      laneOfUpdate({ message: topic }),
      laneOfUpdate({ callback_query: { message: topic } }),
      laneOfUpdate({ stopped_message_generation: { chat: { id: -100 }, message_thread_id: 7 } }),
    ];
    expect(new Set(lanes)).toEqual(new Set(['-100:7']));
    expect(laneOfUpdate({})).toBeUndefined();
    expect(routeOfStoppedDraft({ chat: { id: 5 } })).toEqual({ chatId: 5 });
  });

  it('adds message_thread_id only inside a topic', () => {
    expect(threadParams({ chatId: 5 })).toEqual({});
    expect(threadParams({ chatId: -1, threadId: 2 })).toEqual({ message_thread_id: 2 });
  });
});

describe('frame owners', () => {
  it('sends turn events to the turns, prompts to the prompts and gateway-to-bridge frames nowhere', () => {
    expect(ownerOf({ type: 'message_taken', turnId: 't', inboundIds: ['a'] }).owner).toBe('turn');
    expect(FRAME_OWNER.question).toBe('prompt');
    expect(FRAME_OWNER.user_message).toBe('wrong_way');
    expect(FRAME_OWNER.file_send).toBe('file');
  });
});
