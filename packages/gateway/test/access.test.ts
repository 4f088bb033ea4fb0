/**
 * Access control end to end: strangers get one polite refusal, however much they write and across a
 * gateway restart; nothing of theirs reaches the bridge or SQLite beyond the update id (dedupe) and their
 * user id (to refuse once); their button presses are refused the same way; `allowChats` narrows chats.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Update } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import { createAccess } from '../src/core/intake/access.js';
import { REFUSAL } from '../src/index.js';
import {
  botMessage,
  botMessages,
  connectBridge,
  framesOf,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';

/** Everything SQLite holds on disk (database and WAL), as text, to look for a stranger's words. */
function diskText(w: World): string {
  const base = join(w.stateDir, 'gateway.sqlite');
  const read = (p: string) => {
    try {
      return readFileSync(p).toString('latin1');
    } catch {
      return '';
    }
  };
  return read(base) + read(`${base}-wal`);
}

describe.concurrent('access', () => {
  it('refuses a stranger once, forwards and keeps nothing of theirs', async ({ onTestFinished }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const stranger = tg.addUser({ firstName: 'Mallory' });
    const chatId = tg.privateChat(stranger).id;
    for (const text of ['hello?', 'secret-stranger-words', 'anyone']) tg.sendText(chatId, text);
    await botMessage(tg, chatId, (t) => t === REFUSAL);
    await tg.waitFor(() => tg.pendingUpdates().length === 0 || undefined, { timeoutMs: 5000 });
    await sleep(500);
    expect(botMessages(tg, chatId)).toHaveLength(1);
    expect(framesOf(bridge, 'user_message')).toHaveLength(0);
    expect(world.gateway.status().inbox).toBe(0);

    const db = new Database(join(world.stateDir, 'gateway.sqlite'), { readonly: true });
    try {
      const rows = db.prepare('SELECT payload, handled FROM updates').all() as {
        payload: string | null;
        handled: number;
      }[];
      expect(rows).toHaveLength(3);
      expect(rows.every((r) => r.payload === null && r.handled === 1)).toBe(true);
      expect(db.prepare('SELECT count(*) AS n FROM inbound').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
    expect(diskText(world)).not.toContain('secret-stranger-words');
    expect(diskText(world)).not.toContain('Mallory');

    // Still one refusal after a gateway restart.
    await world.restart();
    tg.sendText(chatId, 'me again');
    await tg.waitFor(() => tg.pendingUpdates().length === 0 || undefined);
    await sleep(500);
    expect(botMessages(tg, chatId)).toHaveLength(1);
    // The allowed user is unaffected.
    tg.sendText(tg.privateChat().id, 'hi from the owner');
    await waitUntil(() => framesOf(bridge, 'user_message').length === 1);
  });

  it('refuses a stranger’s button press and leaves the prompt open for the owner', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const group = tg.createGroup({ title: 'team', supergroup: true });
    const stranger = tg.addUser({ firstName: 'Eve' });
    // The owner talks to the agent there first: only then may the bridge address the group.
    tg.sendText(group.id, '@switchyard_sandbox_bot deploy it');
    await waitUntil(() => framesOf(bridge, 'user_message').length === 1);
    await bridge.send({
      type: 'permission_request',
      requestId: 'r1',
      route: { chatId: group.id },
      toolName: 'Bash',
      summary: 'deploy',
      input: {},
      suggestions: [],
    });
    const prompt = await botMessage(tg, group.id, (t) => t.includes('deploy'));
    const q = tg.pressButton(group.id, prompt.messageId, { text: '✅ Allow' }, { from: stranger });
    const answer = await tg.waitFor(() => tg.callbackQuery(q.id)?.answer);
    expect(answer.text).toBe(REFUSAL);
    await sleep(300);
    expect(framesOf(bridge, 'permission_answer')).toHaveLength(0);
    expect(world.gateway.status().openPrompts).toBe(1);

    const own = tg.pressButton(group.id, prompt.messageId, { text: '✅ Allow' });
    expect((await tg.waitFor(() => tg.callbackQuery(own.id)?.answer)).text).toBe('Allowed');
    await waitUntil(() => framesOf(bridge, 'permission_answer').length === 1);
  });

  it('answers a stranger in a group only where they alone see it, and forwards the allowed user there when addressed', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const group = tg.createGroup({ title: 'team', supergroup: true });
    const stranger = tg.addUser({ firstName: 'Eve' });
    tg.sendText(group.id, '@switchyard_sandbox_bot from a stranger', { from: stranger });
    // Not addressed to the bot: neither stored nor forwarded.
    tg.sendText(group.id, 'just chatting among ourselves');
    tg.sendText(group.id, '@switchyard_sandbox_bot from the owner');
    await waitUntil(() => framesOf(bridge, 'user_message').length === 1);
    await sleep(300);
    // The mention is not part of what the model reads.
    expect(framesOf(bridge, 'user_message').map((f) => f.text)).toEqual(['from the owner']);
    // The group sees no refusal: the stranger's is ephemeral, for them alone.
    const refusals = botMessages(tg, group.id).filter((m) => m.text === REFUSAL);
    expect(refusals.map((m) => m.ephemeral?.receiver.id)).toEqual([stranger.id]);
  });

  it('allowChats narrows the chats an allowed user may use', async ({ onTestFinished }) => {
    const tgUser = 100_000_001; // the sandbox's default user
    const probe = await startWorld();
    const groupId = probe.tg.createGroup({ title: 'ops', supergroup: true }).id;
    await probe.close();
    // Group ids are deterministic in a fresh sandbox, so the same id is created again below.
    const world = await startWorld({ allowUsers: [tgUser], allowChats: [groupId] }, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    expect(tg.createGroup({ title: 'ops', supergroup: true }).id).toBe(groupId);
    const other = tg.createGroup({ title: 'elsewhere', supergroup: true });
    const privateId = tg.privateChat().id;
    tg.sendText(privateId, 'in private');
    tg.sendText(other.id, '@switchyard_sandbox_bot in another group');
    tg.sendText(groupId, '@switchyard_sandbox_bot in ops');
    await waitUntil(() => framesOf(bridge, 'user_message').length === 1);
    await botMessage(tg, privateId, (t) => t === REFUSAL);
    await sleep(300);
    expect(framesOf(bridge, 'user_message').map((f) => f.text)).toEqual(['in ops']);
    expect(botMessages(tg, other.id)).toHaveLength(0);
  });
});

describe.concurrent('the access check', () => {
  const press = (userId: number, chatId?: number): Update =>
    ({
      update_id: 1,
      callback_query: {
        id: 'q',
        chat_instance: 'c',
        from: { id: userId, is_bot: false, first_name: 'u' },
        ...(chatId === undefined
          ? { inline_message_id: 'inline' }
          : { message: { message_id: 1, date: 0, chat: { id: chatId, type: 'group', title: 'g' } } }),
      },
    }) as Update;

  it('checks presses by user, and by chat when chats are listed (a press without a chat is refused)', () => {
    const anyChat = createAccess({ allowUsers: [1] });
    expect(anyChat(press(1, -5))).toBe(true);
    expect(anyChat(press(2, -5))).toBe(false);
    const someChats = createAccess({ allowUsers: [1], allowChats: [-5] });
    expect(someChats(press(1, -5))).toBe(true);
    expect(someChats(press(1, -6))).toBe(false);
    expect(someChats(press(1))).toBe(false);
  });

  it('the bridge may address only chats this agent talked in: a frame naming another chat is dropped', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const strangers = tg.createGroup({ title: 'not ours', supergroup: true });
    const ours = tg.createGroup({ title: 'ours', supergroup: true });
    tg.sendText(ours.id, '@switchyard_sandbox_bot hello');
    await waitUntil(() => framesOf(bridge, 'user_message').length === 1);
    await startTurn(bridge, { turnId: 'intruder', route: { chatId: strangers.id } });
    await bridge.send({
      type: 'operator_event',
      kind: 'stuck',
      message: 'spam',
      route: { chatId: strangers.id },
    });
    await bridge.send({
      type: 'operator_event',
      kind: 'stuck',
      message: 'for us',
      route: { chatId: ours.id },
    });
    await botMessage(tg, ours.id, (t) => t.includes('for us'));
    await sleep(300);
    expect(botMessages(tg, strangers.id)).toHaveLength(0);
    // Known after a restart too: the chats the agent talked in are kept durably.
    await world.gateway.stop();
    await world.gateway.start();
    await bridge.send({
      type: 'operator_event',
      kind: 'stuck',
      message: 'again',
      route: { chatId: ours.id },
    });
    await botMessage(tg, ours.id, (t) => t.includes('again'), 10_000);
  });
});
