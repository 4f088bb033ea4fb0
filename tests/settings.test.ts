/**
 * `/settings` end to end (gateway and bridge as processes, the real CLI against the scripted model, the
 * stand-in Telegram): choosing classic replies in one private chat makes that chat's answers HTML
 * messages (its first text sent, then edited into the answer, no draft, no rich message) while another chat of the
 * same agent still gets drafts and a rich message.
 */
import { rule, say, type WireUser } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

const startSystem = systemPerTest();
const ANSWER = 'Here is **the plan**:\n\n| step | state |\n|---|---|\n| build | done |';

describe('end to end: /settings', () => {
  it('classic in one chat: its answers arrive as HTML messages while another chat still gets rich messages', async () => {
    let bob: WireUser | undefined;
    const system = await startSystem({
      rules: [rule('the plan', say(ANSWER))],
      agent: (telegram) => {
        bob = telegram.addUser({ firstName: 'Bob' });
        return { allow: [telegram.defaultUser.id, bob.id] };
      },
    });
    const { telegram, chatId: ann } = system;
    const bobChat = telegram.privateChat(bob).id;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(ann, '/settings');
    const panel = await telegram.waitFor(
      () => botMessages(telegram, ann).find((m) => m.text.startsWith('Settings of this conversation')),
      { timeoutMs: 60_000 },
    );
    const press = telegram.pressButton(ann, panel.messageId, { text: 'Classic replies' });
    const answer = await telegram.waitFor(() => telegram.callbackQuery(press.id)?.answer, {
      timeoutMs: 30_000,
    });
    expect(answer.text).toBe('Replies: classic');

    telegram.sendText(ann, 'the plan please');
    telegram.sendText(bobChat, 'the plan please');
    const isAnswer = (m: { text: string }) => m.text.includes('build');
    const classic = await telegram.waitFor(() => botMessages(telegram, ann).find(isAnswer), {
      timeoutMs: 90_000,
    });
    const rich = await telegram.waitFor(() => botMessages(telegram, bobChat).find(isAnswer), {
      timeoutMs: 90_000,
    });
    // Ann's: an HTML message grown from its first text (no "…" placeholder), never a draft.
    await telegram.waitFor(
      () => botMessages(telegram, ann).find((m) => isAnswer(m) && m.html.includes('<b>')),
      {
        timeoutMs: 30_000,
      },
    );
    const final = telegram.message(ann, classic.messageId);
    expect(final?.rich).toBeUndefined();
    expect(final?.html).toContain('<b>the plan</b>');
    expect(final?.history.map((v) => v.text)).not.toContain('…');
    expect(telegram.chat(ann).drafts).toEqual([]);
    // Bob's: drafts, then one rich message.
    expect(rich.rich).toBe(true);
    expect(telegram.chat(bobChat).drafts.length).toBeGreaterThan(0);
    // /status in Ann's chat says so.
    telegram.sendText(ann, '/status');
    const status = await telegram.waitFor(
      () => botMessages(telegram, ann).find((m) => m.text.includes('Settings: replies classic')),
      { timeoutMs: 30_000 },
    );
    expect(status.text).toContain('progress card on');
  }, 150_000);
});
