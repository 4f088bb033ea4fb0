import { describe, expect, it } from 'vitest';
import { TERMINAL_BUTTON_EXPIRED } from '../src/io/commands/terminal-commands.js';
import { botMessage, commandAsked, connectBridge, received, sleep, startWorld } from './harness.js';

const ID1 = '11111111-1111-4111-8111-111111111111';
const ID2 = '22222222-2222-4222-8222-222222222222';

describe('/resume and /handoff', () => {
  it('/resume shows the bridge’s list; ▶ N continues that session; a busy one has no button', async () => {
    const { bridge, tg, chatId, request } = await commandAsked('/resume', 'resume_list_request');
    expect(request.route).toEqual({ chatId });
    await bridge.send({
      type: 'resume_list',
      commandId: request.commandId,
      route: { chatId },
      workDir: '/srv/work',
      page: 0,
      pageSize: 6,
      total: 2,
      sessions: [
        {
          sessionId: ID1,
          startedAt: Date.UTC(2026, 11, 1, 9, 30),
          lastAt: Date.UTC(2026, 11, 1, 9, 42),
          firstText: 'fix the login bug',
        },
        {
          sessionId: ID2,
          lastAt: Date.UTC(2026, 10, 30, 8, 0),
          firstText: 'write docs',
          busy: 'a Claude process (pid 7) is running on it',
        },
      ],
    });
    const list = await botMessage(tg, chatId, (t) => t.startsWith('Claude sessions in /srv/work'));
    expect(list.text).toContain('1. 2026-12-01 09:30 UTC · 12 min — “fix the login bug”');
    expect(list.text).toContain(
      '2. 2026-11-30 08:00 UTC — “write docs” · 🔒 a Claude process (pid 7) is running on it',
    );
    const buttons = list.replyMarkup?.inline_keyboard.flat() ?? [];
    expect(buttons.map((b) => b.text)).toEqual(['▶ 1']);
    expect(buttons.every((b) => /^tm:[A-Za-z0-9_-]{16}$/.test(b.callback_data ?? ''))).toBe(true);
    tg.pressButton(chatId, list.messageId, { text: '▶ 1' });
    const resume = await received(bridge, 'resume_session');
    expect(resume).toMatchObject({ route: { chatId }, sessionId: ID1 });
    // Its answer is said in the chat.
    await bridge.send({
      type: 'command_result',
      commandId: resume.commandId,
      ok: true,
      message: 'Continuing.',
    });
    await botMessage(tg, chatId, (t) => t === 'Continuing.');
  });

  it('a forged or foreign /resume button does nothing and says it expired', async () => {
    const { bridge, tg, chatId, request } = await commandAsked('/resume', 'resume_list_request');
    await bridge.send({
      type: 'resume_list',
      commandId: request.commandId,
      route: { chatId },
      workDir: '/w',
      page: 0,
      pageSize: 6,
      total: 1,
      sessions: [{ sessionId: ID1, lastAt: 1, firstText: 'x' }],
    });
    const list = await botMessage(tg, chatId, (t) => t.startsWith('Claude sessions'));
    const forged = tg.pressButton(chatId, list.messageId, { data: `tm:${ID2}` }, { force: true });
    expect((await tg.waitFor(() => tg.callbackQuery(forged.id)?.answer)).text).toBe(TERMINAL_BUTTON_EXPIRED);
    // A real token, pressed in another chat than the one it was shown in.
    const data = list.replyMarkup?.inline_keyboard.flat()[0]?.callback_data ?? '';
    const group = tg.createGroup({ title: 'elsewhere' });
    const there = tg.sendText(group.id, 'hi');
    const foreign = tg.pressButton(group.id, there.messageId, { data }, { force: true });
    expect((await tg.waitFor(() => tg.callbackQuery(foreign.id)?.answer)).text).toBe(TERMINAL_BUTTON_EXPIRED);
    await sleep(200);
    expect(bridge.received.filter((f) => f.type === 'resume_session')).toEqual([]);
  });

  it('a /resume button works only in the topic it was shown in, not in another topic of the forum (issue 27)', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const forum = tg.createGroup({ title: 'forum', supergroup: true, forum: true, topics: ['a', 'b'] });
    const [topicA, topicB] = forum.topics;
    if (!topicA || !topicB) throw new Error('no topics');
    tg.sendText(forum.id, '/resume', { threadId: topicA.threadId });
    const request = await received(bridge, 'resume_list_request');
    expect(request.route).toEqual({ chatId: forum.id, threadId: topicA.threadId });
    await bridge.send({
      type: 'resume_list',
      commandId: request.commandId,
      route: request.route,
      workDir: '/w',
      page: 0,
      pageSize: 6,
      total: 1,
      sessions: [{ sessionId: ID1, lastAt: 1, firstText: 'x' }],
    });
    const list = await botMessage(tg, forum.id, (t) => t.startsWith('Claude sessions'));
    const data = list.replyMarkup?.inline_keyboard.flat()[0]?.callback_data ?? '';
    const inB = tg.sendText(forum.id, 'hi', { threadId: topicB.threadId });
    const foreign = tg.pressButton(forum.id, inB.messageId, { data }, { force: true });
    expect((await tg.waitFor(() => tg.callbackQuery(foreign.id)?.answer)).text).toBe(TERMINAL_BUTTON_EXPIRED);
    await sleep(200);
    expect(bridge.received.filter((f) => f.type === 'resume_session')).toEqual([]);
    // In its own topic it works.
    tg.pressButton(forum.id, list.messageId, { data });
    expect(await received(bridge, 'resume_session')).toMatchObject({ route: request.route, sessionId: ID1 });
  });

  it('/handoff during a turn offers to stop it now; the finished handoff prints the command in a code block', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/handoff');
    const first = await received(bridge, 'handoff');
    expect(first.now).toBeUndefined();
    await bridge.send({
      type: 'handoff_result',
      commandId: first.commandId,
      route: { chatId },
      outcome: 'after_turn',
    });
    const offer = await botMessage(tg, chatId, (t) => t.startsWith('A turn is running'));
    tg.pressButton(chatId, offer.messageId, { text: '⏹ Stop the turn and hand off now' });
    const now = await received(bridge, 'handoff', 1);
    expect(now).toMatchObject({ route: { chatId }, now: true });
    await bridge.send({
      type: 'handoff_result',
      commandId: now.commandId,
      route: { chatId },
      outcome: 'done',
      sessionId: ID1,
      workDir: "/srv/my work/it's",
    });
    const done = await botMessage(tg, chatId, (t) => t.startsWith('Handed off'));
    expect(done.text).toContain(`cd '/srv/my work/it'\\''s' && claude --resume ${ID1}`);
    expect(done.html).toContain('<pre>');
  });

  it('/sessions offers Reset + worktree for a conversation with a worktree; the press sends worktree_remove', async () => {
    const { bridge, tg, chatId, request } = await commandAsked('/sessions', 'sessions_request');
    await bridge.send({
      type: 'sessions',
      commandId: request.commandId,
      sessions: [
        { route: { chatId }, live: false, state: 'idle', queued: 0, costUsd: 0, worktree: '/s/worktrees/c1' },
      ],
    });
    const list = await botMessage(tg, chatId, (t) => t.includes('conversation(s)'));
    const labels = list.replyMarkup?.inline_keyboard.flat().map((b) => b.text);
    expect(labels).toEqual(['⏹ Stop 1', '♻️ Reset 1', '🗑 Reset 1 + worktree']);
    tg.pressButton(chatId, list.messageId, { text: '🗑 Reset 1 + worktree' });
    expect(await received(bridge, 'worktree_remove')).toMatchObject({ route: { chatId } });
  });
});
