/**
 * The newer Bot API parts against the stand-in Telegram, current and older: a draft kept on the stop
 * press (`keep_on_stop`), a `/sessions` button disabled once pressed, and what only one member of a group
 * should see sent ephemerally — each with the old way on a server that lacks it.
 */
import type { FrameOf, Route } from '@switchyard/protocol';
import type { NewerApiPart } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { REFUSAL } from '../src/core/intake/access.js';
import {
  botMessage,
  botMessages,
  connectBridge,
  type FakeBridge,
  framesOf,
  sleep,
  startTurn,
  startWorld,
  waitUntil,
} from './harness.js';

const BOT = '@switchyard_sandbox_bot';

/** A rich world (optionally an older server) with a fake bridge and the user's message taken into a turn. */
async function richTurn(lacks: NewerApiPart[] = []) {
  const world = await startWorld({ replies: 'rich' }, { lacks });
  const bridge = await connectBridge(world.socketPath);
  const route: Route = { chatId: world.tg.privateChat().id };
  world.tg.sendText(route.chatId, 'hello');
  const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
  await startTurn(bridge, { turnId: 't1', route, inboundIds: [frame.inboundId] });
  return { world, bridge, route, tg: world.tg };
}

/** The model's text so far, then (after the stop) the interrupted end of the turn. */
async function interruptedAnswer(bridge: FakeBridge, text: string): Promise<void> {
  await bridge.send({ type: 'text', turnId: 't1', blockId: 'b1', text });
  await bridge.send({ type: 'turn_ended', turnId: 't1', outcome: 'interrupted' });
}

describe('keep_on_stop: the stopped draft stays until the answer replaces it', () => {
  it('drafts ask to be kept; after the stop press the partial draft is still shown, then the answer ends it', async () => {
    const { bridge, route, tg } = await richTurn();
    await bridge.send({ type: 'text_delta', turnId: 't1', blockId: 'b1', delta: 'The first half' });
    const shown = await tg.waitFor(() =>
      tg.chat(route.chatId).drafts.find((d) => d.text.includes('first half')),
    );
    expect(shown).toMatchObject({ canStop: true, keepOnStop: true });
    tg.stopDraft(route.chatId);
    await waitUntil(() => framesOf(bridge, 'interrupt')[0]);
    // Between the press and the answer the user still reads the partial text.
    expect(tg.chat(route.chatId).drafts.at(-1)).toMatchObject({ keepOnStop: true, text: shown.text });
    expect(tg.chat(route.chatId).drafts.at(-1)?.superseded).toBeUndefined();
    await interruptedAnswer(bridge, 'The first half');
    const final = await tg.waitFor(() => botMessages(tg, route.chatId).find((m) => m.rich));
    expect(final.text).toContain('The first half');
    expect(tg.chat(route.chatId).drafts.at(-1)?.superseded).toBe(true);
  });

  it('on an older server (keep_on_stop ignored) the draft goes at the press, and the answer still arrives', async () => {
    const { bridge, route, tg } = await richTurn(['keep_on_stop']);
    await bridge.send({ type: 'text_delta', turnId: 't1', blockId: 'b1', delta: 'The first half' });
    await tg.waitFor(() => tg.chat(route.chatId).drafts.find((d) => d.text.includes('first half')));
    tg.stopDraft(route.chatId);
    expect(tg.chat(route.chatId).drafts.at(-1)?.superseded).toBe(true);
    await interruptedAnswer(bridge, 'The first half');
    const final = await tg.waitFor(() => botMessages(tg, route.chatId).find((m) => m.rich));
    expect(final.text).toContain('The first half');
  });

  it('a server that refuses the parameter gets the draft again without it, and no more drafts with it', async () => {
    const { world, bridge, route, tg } = await richTurn();
    tg.failNext('sendRichMessageDraft', { description: 'Bad Request: unknown parameter keep_on_stop' });
    await bridge.send({ type: 'text_delta', turnId: 't1', blockId: 'b1', delta: 'Some words' });
    await tg.waitFor(() => tg.chat(route.chatId).drafts.find((d) => d.text.includes('Some words')));
    await sleep(150);
    await bridge.send({ type: 'text_delta', turnId: 't1', blockId: 'b1', delta: ' and more words' });
    await tg.waitFor(() => tg.chat(route.chatId).drafts.find((d) => d.text.includes('more words')));
    const drafts = tg.chat(route.chatId).drafts.filter((d) => d.text !== '');
    expect(drafts.every((d) => d.canStop && d.keepOnStop === undefined)).toBe(true);
    expect(tg.calls('sendRichMessageDraft').filter((c) => !c.ok)).toHaveLength(1);
    expect(world.logger.lines.filter((l) => l.fields.event === 'bot_api_part_missing')).toHaveLength(1);
  });
});

/** `/sessions` in the user's private chat, answered by the fake bridge with two conversations. */
async function sessionsList(lacks: NewerApiPart[] = []) {
  const world = await startWorld({}, { lacks });
  const bridge = await connectBridge(world.socketPath);
  const { tg } = world;
  const chatId = tg.privateChat().id;
  tg.sendText(chatId, '/sessions');
  const request = await waitUntil(() => framesOf(bridge, 'sessions_request')[0]);
  const session = (threadId: number): FrameOf<'sessions'>['sessions'][number] => ({
    route: { chatId, threadId },
    live: true,
    state: 'idle',
    queued: 0,
    costUsd: 0,
    lastActiveAt: threadId,
  });
  await bridge.send({ type: 'sessions', commandId: request.commandId, sessions: [session(2), session(1)] });
  const list = await botMessage(tg, chatId, (t) => t.startsWith('2 conversation(s)'));
  return { world, bridge, tg, chatId, list };
}

describe('disabled buttons: a /sessions button that has done its job', () => {
  it('becomes a disabled "✓" button in place, and the other buttons stay pressable', async () => {
    const { bridge, tg, chatId, list } = await sessionsList();
    tg.pressButton(chatId, list.messageId, { text: '⏹ Stop 1' });
    await waitUntil(() => framesOf(bridge, 'stop_session')[0]);
    const edited = await tg.waitFor(() => {
      const m = tg.message(chatId, list.messageId);
      return m?.replyMarkup?.inline_keyboard[0]?.[0]?.disabled ? m : undefined;
    });
    expect(edited.replyMarkup?.inline_keyboard.flat().map((b) => b.text)).toEqual([
      '⏹ Stop 1 ✓',
      '♻️ Reset 1',
      '⏹ Stop 2',
      '♻️ Reset 2',
    ]);
    expect(() => tg.pressButton(chatId, list.messageId, { text: '⏹ Stop 1 ✓' })).toThrow(/disabled/);
    tg.pressButton(chatId, list.messageId, { text: '♻️ Reset 2' });
    await waitUntil(() => framesOf(bridge, 'clear')[0]);
  });

  it('on an older server the keyboard stays as it was, learnt once for the run', async () => {
    const { world, bridge, tg, chatId, list } = await sessionsList(['disabled_buttons']);
    tg.pressButton(chatId, list.messageId, { text: '⏹ Stop 1' });
    await waitUntil(() => framesOf(bridge, 'stop_session')[0]);
    await waitUntil(() => world.logger.lines.find((l) => l.fields.event === 'bot_api_part_missing'));
    tg.pressButton(chatId, list.messageId, { text: '⏹ Stop 2' });
    await waitUntil(() => framesOf(bridge, 'stop_session')[1]);
    await sleep(200);
    expect(tg.message(chatId, list.messageId)?.history).toHaveLength(1);
    // Refused once, then not tried again.
    expect(tg.calls('editMessageReplyMarkup')).toHaveLength(1);
  });
});

describe('ephemeral messages: what only one member of a group should see', () => {
  async function group(lacks: NewerApiPart[] = []) {
    const world = await startWorld({}, { lacks });
    const { tg } = world;
    const stranger = tg.addUser({ firstName: 'Mallory' });
    const team = tg.createGroup({ title: 'team', supergroup: true });
    return { world, tg, stranger, team };
  }

  it('a stranger who addresses the bot is refused once, where only they see it', async () => {
    const { tg, stranger, team } = await group();
    tg.sendText(team.id, `${BOT} do my homework`, { from: stranger });
    const refusal = await botMessage(tg, team.id, (t) => t === REFUSAL);
    expect(refusal.ephemeral?.receiver.id).toBe(stranger.id);
    tg.sendText(team.id, `${BOT} please`, { from: stranger });
    // A stranger who does not address the bot hears nothing, and the refusal is said once.
    tg.sendText(team.id, 'just chatting', { from: stranger });
    await sleep(300);
    expect(botMessages(tg, team.id)).toHaveLength(1);
  });

  it('on an older server the refusal would be seen by the group: it is taken back, and not tried again', async () => {
    const { world, tg, stranger, team } = await group(['ephemeral_messages']);
    tg.sendText(team.id, `${BOT} do my homework`, { from: stranger });
    await waitUntil(() => world.logger.lines.find((l) => l.fields.event === 'bot_api_part_missing'));
    await tg.waitFor(() => tg.chat(team.id).deleted.find((m) => m.text === REFUSAL));
    expect(botMessages(tg, team.id)).toHaveLength(0);
    const other = tg.addUser({ firstName: 'Trudy' });
    tg.sendText(team.id, `${BOT} and me?`, { from: other });
    await sleep(300);
    // The old way in a group: nothing is said, and nothing more is sent.
    expect(tg.calls('sendMessage')).toHaveLength(1);
  });

  it('/help and /status in a group answer only the member who asked', async () => {
    const { world, tg, team } = await group();
    tg.sendText(team.id, '/help');
    const help = await botMessage(tg, team.id, (t) => t.includes('Claude Code agent'));
    expect(help.ephemeral?.receiver.id).toBe(world.userId);
    tg.sendText(team.id, '/status');
    const status = await botMessage(tg, team.id, (t) => /bridge/i.test(t));
    expect(status.ephemeral?.receiver.id).toBe(world.userId);
  });

  it('/help in a group on an older server goes to the group, as before', async () => {
    const { tg, team } = await group(['ephemeral_messages']);
    tg.sendText(team.id, '/help');
    await tg.waitFor(() => tg.chat(team.id).deleted.find((m) => m.text.includes('Claude Code agent')));
    const help = await botMessage(tg, team.id, (t) => t.includes('Claude Code agent'));
    expect(help.ephemeral).toBeUndefined();
    tg.sendText(team.id, '/help');
    await tg.waitFor(() => tg.calls('sendMessage').length >= 3);
    await sleep(200);
    // Learnt: the second answer is sent once, the old way.
    expect(tg.calls('sendMessage')).toHaveLength(3);
    expect(botMessages(tg, team.id)).toHaveLength(2);
  });

  it('an ephemeral answer refused for a reason of its own is said to the group that once, and tried again next time', async () => {
    const { world, tg, team } = await group();
    tg.failNext('sendMessage', { description: 'Bad Request: not enough rights to send ephemeral messages' });
    tg.sendText(team.id, '/help');
    const help = await botMessage(tg, team.id, (t) => t.includes('Claude Code agent'));
    expect(help.ephemeral).toBeUndefined();
    tg.sendText(team.id, '/help');
    const next = await tg.waitFor(() => botMessages(tg, team.id).find((m) => m.ephemeral));
    expect(next.ephemeral?.receiver.id).toBe(world.userId);
    expect(world.logger.lines.some((l) => l.fields.event === 'bot_api_part_missing')).toBe(false);
  });

  it('in a private chat /help is an ordinary message', async () => {
    const { world, tg } = await group();
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, '/help');
    const help = await botMessage(tg, chatId, (t) => t.includes('Claude Code agent'));
    expect(help.ephemeral).toBeUndefined();
    expect(world.logger.lines.some((l) => l.fields.event === 'bot_api_part_missing')).toBe(false);
  });
});
