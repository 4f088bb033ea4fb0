/**
 * In a group, people who are not on the allowlist may read along, so a file the agent sends there waits
 * for an allowed user's Allow on a permission prompt (`confirmFileSends`, default on in groups): nothing
 * is uploaded before the press, Deny sends nothing, and a private chat is not asked.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { rule, say, sendFile, type TelegramServer } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

type Shown = { messageId: number; text: string; replyMarkup?: { inline_keyboard: { text: string }[][] } };
const button = (m: Shown, label: string) =>
  m.replyMarkup?.inline_keyboard.flat().find((b) => b.text.includes(label));
const documents = (telegram: TelegramServer, chatId: number) =>
  botMessages(telegram, chatId).filter((m) => m.kind === 'document');

describe('end to end: file sends into a group ask first', () => {
  const startSystem = systemPerTest();

  it('uploads into a group only after Allow, sends nothing on Deny, and never asks in a private chat', async () => {
    const system = await startSystem({
      rules: [
        rule('share the plan', sendFile('plan.txt', 'The plan'), say('Shared the plan.')),
        rule('share the secret', sendFile('secret.txt', 'Secret'), say('Done with the secret.')),
      ],
    });
    const { telegram, chatId, dir } = system;
    writeFileSync(path.join(dir, 'work', 'plan.txt'), 'step 1\n');
    writeFileSync(path.join(dir, 'work', 'secret.txt'), 'do not share\n');
    const group = telegram.createGroup({ title: 'Team' });
    system.start('gateway');
    system.start('bridge');

    telegram.sendText(group.id, '@switchyard_sandbox_bot share the plan');
    const prompt = await telegram.waitFor(
      () => botMessages(telegram, group.id).find((m) => button(m as Shown, 'Allow')),
      { timeoutMs: 90_000 },
    );
    expect(prompt.text).toContain('plan.txt');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(documents(telegram, group.id)).toHaveLength(0);
    const allow = button(prompt as Shown, 'Allow');
    telegram.pressButton(group.id, prompt.messageId, { text: allow?.text ?? '' });
    await telegram.waitFor(() => botMessages(telegram, group.id).find((m) => m.text === 'Shared the plan.'), {
      timeoutMs: 60_000,
    });
    expect(documents(telegram, group.id).map((m) => m.file?.fileName)).toEqual(['plan.txt']);

    telegram.sendText(group.id, '@switchyard_sandbox_bot share the secret');
    const second = await telegram.waitFor(
      () =>
        botMessages(telegram, group.id).find(
          (m) =>
            m.messageId !== prompt.messageId && button(m as Shown, 'Deny') && m.text.includes('secret.txt'),
        ),
      { timeoutMs: 60_000 },
    );
    const deny = button(second as Shown, 'Deny');
    telegram.pressButton(group.id, second.messageId, { text: deny?.text ?? '' });
    await telegram.waitFor(
      () => botMessages(telegram, group.id).find((m) => m.text === 'Done with the secret.'),
      { timeoutMs: 60_000 },
    );
    expect(documents(telegram, group.id).map((m) => m.file?.fileName)).toEqual(['plan.txt']);

    // A private chat: no prompt, the file goes.
    telegram.sendText(chatId, 'share the plan');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Shared the plan.'), {
      timeoutMs: 60_000,
    });
    expect(documents(telegram, chatId).map((m) => m.file?.fileName)).toEqual(['plan.txt']);
    expect(botMessages(telegram, chatId).filter((m) => button(m as Shown, 'Allow'))).toHaveLength(0);
  });
});
