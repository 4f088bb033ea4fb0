/**
 * The conversation commands: `/sessions` lists the conversations of the chat it is sent in (an
 * operator's private chat: all of them) with stop and reset buttons bound to server-side tokens (a press
 * sends `stop_session` or `clear` for that conversation, answered in the chat that pressed),
 * `/rename` names the current one, `/status` asks about the conversation it is sent in, and a
 * `session_waiting` turns the message's placeholder into "waiting for a free session".
 */
import type { SessionInfo } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { sessionsView } from '../src/core/commands/command-texts.js';
import {
  createSessionButtons,
  SESSION_BUTTON_EXPIRED,
  SESSION_BUTTON_TTL_MS,
} from '../src/io/commands/session-buttons.js';
import { botMessage, commandAsked, connectBridge, received, startWorld } from './harness.js';

/** The `index`-th frame of `type` the bridge received. */

describe('conversation commands', () => {
  it("/sessions in an operator's private chat lists every conversation; Stop and Reset act on the one pressed", async () => {
    const { bridge, tg, chatId, request } = await commandAsked('/sessions', 'sessions_request', {
      operators: [100_000_001],
    });
    await bridge.send({
      type: 'sessions',
      commandId: request.commandId,
      sessions: [
        {
          route: { chatId },
          live: true,
          state: 'running',
          turnId: 't1',
          queued: 2,
          costUsd: 0.125,
          lastActiveAt: 2,
        },
        {
          route: { chatId: -100777, threadId: 22 },
          name: 'api',
          live: false,
          state: 'idle',
          queued: 0,
          costUsd: 1.5,
          lastActiveAt: 1,
        },
      ],
    });
    const list = await botMessage(tg, chatId, (t) => t.startsWith('2 conversation(s)'));
    expect(list.text).toContain(
      `1. private chat ${chatId} — live, running · turn running · 2 queued · $0.125`,
    );
    expect(list.text).toContain('2. api — idle (no process) · $1.50');
    const labels = list.replyMarkup?.inline_keyboard.flat().map((b) => b.text);
    expect(labels).toEqual(['⏹ Stop 1', '♻️ Reset 1', '⏹ Stop 2', '♻️ Reset 2']);

    const stop = tg.pressButton(chatId, list.messageId, { text: '⏹ Stop 2' });
    expect((await tg.waitFor(() => tg.callbackQuery(stop.id)?.answer)).text).toBe('Stopping…');
    const stopFrame = await received(bridge, 'stop_session');
    expect(stopFrame.route).toEqual({ chatId: -100777, threadId: 22 });
    // The result is said in the chat that pressed, not in the stopped conversation.
    await bridge.send({
      type: 'command_result',
      commandId: stopFrame.commandId,
      ok: true,
      message: 'Stopped it.',
    });
    await botMessage(tg, chatId, (t) => t === 'Stopped it.');

    const reset = tg.pressButton(chatId, list.messageId, { text: '♻️ Reset 1' });
    expect((await tg.waitFor(() => tg.callbackQuery(reset.id)?.answer)).text).toBe('Resetting…');
    expect((await received(bridge, 'clear')).route).toEqual({ chatId });
  });

  /** Two conversations: this group's topic and someone's private chat, as the bridge reports them. */
  const twoConversations = (groupId: number): SessionInfo[] => [
    {
      route: { chatId: groupId, threadId: 4 },
      live: true,
      state: 'idle',
      queued: 0,
      costUsd: 0.5,
      lastActiveAt: 2,
    },
    {
      route: { chatId: 424242 },
      name: 'Ann private',
      live: true,
      state: 'idle',
      queued: 0,
      costUsd: 9,
      lastActiveAt: 3,
    },
  ];

  it('/sessions in a group lists only that group, even for an operator', async () => {
    const world = await startWorld({ operators: [100_000_001] });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const group = tg.createGroup({ title: 'team', supergroup: true });
    tg.sendText(group.id, '/sessions');
    const request = await received(bridge, 'sessions_request');
    await bridge.send({
      type: 'sessions',
      commandId: request.commandId,
      sessions: twoConversations(group.id),
    });
    const list = await botMessage(tg, group.id, (t) => t.includes('conversation(s)'));
    expect(list.text).toContain('1 conversation(s):');
    expect(list.text).toContain(`chat ${group.id}, topic 4`);
    expect(list.text).not.toContain('Ann private');
    expect(list.text).not.toContain('424242');
    expect(list.replyMarkup?.inline_keyboard.flat()).toHaveLength(2);
  });

  it('a forged or foreign /sessions button does nothing and says it expired', async () => {
    const { bridge, tg, chatId, request } = await commandAsked('/sessions', 'sessions_request');
    await bridge.send({
      type: 'sessions',
      commandId: request.commandId,
      sessions: [{ route: { chatId }, live: true, state: 'idle', queued: 0, costUsd: 0, lastActiveAt: 1 }],
    });
    const list = await botMessage(tg, chatId, (t) => t.includes('conversation(s)'));
    // The old format, naming a conversation itself: not a token.
    const forged = tg.pressButton(chatId, list.messageId, { data: 'ss:reset:424242' }, { force: true });
    expect((await tg.waitFor(() => tg.callbackQuery(forged.id)?.answer)).text).toBe(SESSION_BUTTON_EXPIRED);
    const made = tg.pressButton(chatId, list.messageId, { data: 'ss:AAAAAAAAAAAAAAAA' }, { force: true });
    expect((await tg.waitFor(() => tg.callbackQuery(made.id)?.answer)).text).toBe(SESSION_BUTTON_EXPIRED);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(bridge.received.filter((f) => f.type === 'clear' || f.type === 'stop_session')).toEqual([]);
  });

  it('/rename and /status act on the conversation they are sent in (a forum topic here)', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const forum = tg.createGroup({ title: 'f', supergroup: true, forum: true, topics: ['web'] });
    const web = forum.topics[0];
    if (!web) throw new Error('no topic');
    tg.sendText(forum.id, '/rename Web frontend', { threadId: web.threadId });
    const rename = await received(bridge, 'rename');
    expect(rename).toMatchObject({
      name: 'Web frontend',
      route: { chatId: forum.id, threadId: web.threadId },
    });
    tg.sendText(forum.id, '/status', { threadId: web.threadId });
    expect((await received(bridge, 'status_request')).route).toEqual({
      chatId: forum.id,
      threadId: web.threadId,
    });
    tg.sendText(forum.id, '/rename', { threadId: web.threadId });
    await botMessage(tg, forum.id, (t) => t.includes('/rename NAME'));
  });

  it('a message that waits for a free session shows it waiting (👀), with no message of its own', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, 'hello');
    const message = await received(bridge, 'user_message');
    await bridge.send({
      type: 'session_waiting',
      route: { chatId },
      inboundIds: [message.inboundId],
      position: 1,
    });
    await tg.waitFor(() => tg.messages(chatId).find((m) => m.from === 'user' && m.reactions.includes('👀')));
    expect(tg.messages(chatId).filter((m) => m.from === 'bot')).toEqual([]);
  });
});

describe('a message the bridge refuses', () => {
  it('is not silently gone: its placeholder says the agent could not take it, and the next one goes through', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath, 'test', {
      refuse: (frame) => frame.type === 'user_message' && frame.text === 'poison',
    });
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, 'poison');
    await botMessage(tg, chatId, (t) => t.startsWith('✗ Not read by the agent (the agent could not take it'));
    tg.sendText(chatId, 'fine');
    const next = await received(bridge, 'user_message');
    expect(next.text).toBe('fine');
  });
});

describe('the /sessions view', () => {
  it('names each conversation, newest first, and its buttons carry tokens that resolve to the route', () => {
    let clock = 0;
    const buttons = createSessionButtons(() => clock);
    const shownIn = { chatId: 5 };
    const view = sessionsView(
      [
        { route: { chatId: 5 }, live: false, state: 'idle', queued: 0, costUsd: 0, lastActiveAt: 1 },
        {
          route: { chatId: -9, threadId: 3 },
          live: true,
          state: 'idle',
          queued: 0,
          costUsd: 0,
          lastActiveAt: 9,
        },
      ],
      (action, route) => buttons.issue(action, route, shownIn),
    );
    expect(view.text.split('\n')[1]).toBe('1. chat -9, topic 3 — live, idle · $0.000');
    const data = view.buttons.flat().map((b) => b.callback_data);
    // Opaque tokens: the prefix and 16 random base64url characters, no action or chat id in them.
    // (Asserting the form, not the absence of "-9": a random token holds "-9" about one run in seventy.)
    expect(data.every((d) => /^ss:[A-Za-z0-9_-]{16}$/.test(d))).toBe(true);
    const [stop = '', , , reset = ''] = data;
    expect(buttons.resolve(stop, shownIn)).toEqual({ action: 'stop', route: { chatId: -9, threadId: 3 } });
    expect(buttons.resolve(reset, shownIn)).toEqual({ action: 'reset', route: { chatId: 5 } });
    // Only in the chat that was shown the list, and only while the token is kept.
    expect(buttons.resolve(stop, { chatId: -9 })).toBeUndefined();
    expect(buttons.resolve('ss:reset:5', shownIn)).toBeUndefined();
    clock = SESSION_BUTTON_TTL_MS + 1;
    expect(buttons.resolve(stop, shownIn)).toBeUndefined();
    expect(sessionsView([], () => '').text).toBe('No conversations yet.');
  });
});
