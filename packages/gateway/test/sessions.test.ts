/**
 * The conversation commands: `/sessions` lists the agent's conversations with stop and reset buttons (a
 * press sends `stop_session` or `clear` for that conversation, answered in the chat that pressed),
 * `/rename` names the current one, `/status` asks about the conversation it is sent in, and a
 * `session_waiting` turns the message's placeholder into "waiting for a free session".
 */
import type { AppFrame, FrameOf } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { parseSessionButton, sessionsView } from '../src/commands.js';
import { botMessage, connectBridge, type FakeBridge, startWorld, waitUntil } from './harness.js';

/** The `index`-th frame of `type` the bridge received. */
function received<T extends AppFrame['type']>(b: FakeBridge, type: T, index = 0): Promise<FrameOf<T>> {
  return waitUntil(() => b.received.filter((f) => f.type === type)[index] as FrameOf<T> | undefined);
}

describe('conversation commands', () => {
  it('/sessions lists conversations with buttons; Stop and Reset act on the one pressed', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/sessions');
    const request = await received(bridge, 'sessions_request');
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

  it('a message that waits for a free session says so in its placeholder', async () => {
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
    await botMessage(tg, chatId, (t) => t === '⏳ waiting for a free session (1 conversation(s) ahead)');
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
  it('names each conversation, newest first, and its buttons round-trip to the route', () => {
    const view = sessionsView([
      { route: { chatId: 5 }, live: false, state: 'idle', queued: 0, costUsd: 0, lastActiveAt: 1 },
      {
        route: { chatId: -9, threadId: 3 },
        live: true,
        state: 'idle',
        queued: 0,
        costUsd: 0,
        lastActiveAt: 9,
      },
    ]);
    expect(view.text.split('\n')[1]).toBe('1. chat -9, topic 3 — live, idle · $0.000');
    const data = view.buttons.flat().map((b) => b.callback_data);
    expect(data).toEqual(['ss:stop:-9:3', 'ss:reset:-9:3', 'ss:stop:5', 'ss:reset:5']);
    expect(data.every((d) => Buffer.byteLength(d) <= 64)).toBe(true);
    expect(parseSessionButton('ss:stop:-9:3')).toEqual({
      action: 'stop',
      route: { chatId: -9, threadId: 3 },
    });
    expect(parseSessionButton('ss:reset:5')).toEqual({ action: 'reset', route: { chatId: 5 } });
    expect(parseSessionButton('ss:explode:5')).toBeUndefined();
    expect(sessionsView([]).text).toBe('No conversations yet.');
  });
});
