/**
 * `/settings` at the gateway (the stand-in Telegram, a fake bridge): the panel's buttons change one
 * conversation's replies (classic: a placeholder message edited into an HTML answer, while another chat
 * keeps drafts and rich messages) and its progress card (off: no card, while another chat gets one);
 * a model or mode button runs `/model` or `/mode` for that conversation; a button is honoured only in the
 * conversation whose panel carried it; `/status` shows the settings, and they survive a restart.
 */
import type { WireUser } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { SETTINGS_BUTTON_EXPIRED } from '../src/io/settings/settings-buttons.js';
import {
  botMessage,
  botMessages,
  connectBridge,
  type FakeBridge,
  framesOf,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';
import { CARD, turn } from './pin-turns.js';

/** A world with rich replies for the default user and Bob, each in their private chat. */
async function twoChats(overrides: Parameters<typeof startWorld>[0] = {}) {
  const world = await startWorld({ replies: 'rich', ...overrides });
  const bob: WireUser = world.tg.addUser({ firstName: 'Bob' });
  world.options.allowUsers = [...world.options.allowUsers, bob.id];
  await world.restart();
  const bridge = await connectBridge(world.socketPath);
  return { world, bridge, ann: world.tg.privateChat().id, bob: world.tg.privateChat(bob).id };
}

/** Sends `/settings` in `chatId`, presses the button labelled `label`, and returns the press's answer. */
async function choose(world: World, chatId: number, label: string): Promise<string | undefined> {
  const { tg } = world;
  const before = botMessages(tg, chatId).filter((m) => m.text.startsWith('Settings of this')).length;
  tg.sendText(chatId, '/settings');
  const panel = await tg.waitFor(
    () => botMessages(tg, chatId).filter((m) => m.text.startsWith('Settings of this'))[before],
  );
  const press = tg.pressButton(chatId, panel.messageId, { text: label });
  return (await tg.waitFor(() => tg.callbackQuery(press.id)?.answer)).text;
}

/** The user writes in `chatId`; the fake bridge opens turn `turnId` with it and answers `answer`. */
async function exchange(world: World, bridge: FakeBridge, chatId: number, turnId: string, answer: string) {
  const before = framesOf(bridge, 'user_message').length;
  world.tg.sendText(chatId, `question for ${turnId}`);
  const frame = await waitUntil(() => framesOf(bridge, 'user_message')[before]);
  await startTurn(bridge, { turnId, route: { chatId }, inboundIds: [frame.inboundId] });
  await bridge.send({ type: 'text', turnId, blockId: 'b', text: answer });
  await bridge.send({ type: 'turn_ended', turnId, outcome: 'success' });
  return world.tg.waitFor(() => botMessages(world.tg, chatId).find((m) => m.text.includes('table')), {
    timeoutMs: 8000,
  });
}

const ANSWER = '**Bold** and a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |';

describe('/settings', () => {
  it('classic in one chat: its answer is an HTML message grown from its first text, while another chat still gets a rich message', async () => {
    const { world, bridge, ann, bob } = await twoChats();
    const { tg } = world;
    expect(await choose(world, ann, 'Classic replies')).toBe('Replies: classic');
    // The panel is redrawn with the choice marked.
    await tg.waitFor(() =>
      botMessages(tg, ann).find((m) =>
        m.replyMarkup?.inline_keyboard.flat().some((b) => b.text === '✓ Classic replies'),
      ),
    );
    const classic = await exchange(world, bridge, ann, 't-ann', ANSWER);
    expect(classic.rich).toBeUndefined();
    expect(classic.html).toContain('<b>Bold</b>');
    // No "…" placeholder: the answer's first message is its first text.
    expect(classic.history.map((v) => v.text)).not.toContain('…');
    const rich = await exchange(world, bridge, bob, 't-bob', ANSWER);
    expect(rich.rich).toBe(true);
    expect(tg.chat(bob).drafts.length).toBeGreaterThan(0);
    expect(tg.chat(ann).drafts).toEqual([]);
    // /status says so, and the setting survives a restart of the gateway.
    await world.restart();
    tg.sendText(ann, '/status');
    const status = await botMessage(tg, ann, (t) => t.startsWith('Conversation:'), 8000);
    expect(status.text).toContain('Settings: replies classic · progress card on');
  });

  it('card off in one chat: its long turn gets no card, while another chat’s does', async () => {
    const { world, bridge, ann, bob } = await twoChats({ card: CARD, replies: 'classic' });
    const { tg } = world;
    expect(await choose(world, ann, 'Card off')).toBe('Progress card: off');
    await Promise.all([turn(bridge, ann, 'ta', 900), turn(bridge, bob, 'tb', 900)]);
    await tg.waitFor(() => tg.chat(bob).pinned.length === 0 && tg.calls('unpinChatMessage').length === 1, {
      timeoutMs: 5000,
    });
    expect(tg.messages(bob).some((m) => m.text.includes('Bash'))).toBe(true);
    expect(tg.messages(ann).some((m) => m.text.includes('Bash'))).toBe(false);
    expect(tg.calls('pinChatMessage').every((c) => c.chatId === bob)).toBe(true);
  });

  it('a model or mode button runs /model or /mode for that conversation; buttons work only where they were shown', async () => {
    const { world, bridge, ann, bob } = await twoChats({ replies: 'classic', models: ['opus', 'haiku'] });
    const { tg } = world;
    expect(await choose(world, ann, 'haiku')).toBe('Model: haiku');
    const model = await waitUntil(() => framesOf(bridge, 'set_model')[0]);
    expect(model).toMatchObject({ model: 'haiku', route: { chatId: ann } });
    expect(await choose(world, ann, 'plan')).toBe('Mode: plan');
    const mode = await waitUntil(() => framesOf(bridge, 'set_mode')[0]);
    expect(mode).toMatchObject({ mode: 'plan', route: { chatId: ann } });
    // The operator's forbidden mode is not offered.
    const panel = botMessages(tg, ann).find((m) => m.text.startsWith('Settings of this'));
    const labels = panel?.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];
    expect(labels.some((l) => l.includes('bypassPermissions'))).toBe(false);
    // Ann's button pressed in Bob's chat does nothing.
    const data = panel?.replyMarkup?.inline_keyboard
      .flat()
      .find((b) => b.text.includes('Classic'))?.callback_data;
    tg.sendText(bob, '/settings');
    const bobPanel = await botMessage(tg, bob, (t) => t.startsWith('Settings of this'));
    const forged = tg.pressButton(bob, bobPanel.messageId, { data: data ?? '' }, { force: true });
    expect((await tg.waitFor(() => tg.callbackQuery(forged.id)?.answer)).text).toBe(SETTINGS_BUTTON_EXPIRED);
    await sleep(100);
    expect(world.gateway.status({ chatId: bob }).settings).toEqual({ replies: 'classic', card: true });
    expect(framesOf(bridge, 'set_model')).toHaveLength(1);
  });
});
