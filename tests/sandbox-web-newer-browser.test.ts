/**
 * The web view renders what the newer Bot API parts put in a chat, in headless Chromium against the
 * stand-in Telegram (in this process, driven through its raw Bot API as a bot would): a voice note with
 * its player and length and the transcript replying to it, a disabled button beside a live one, an
 * ephemeral message (marked for its receiver, only a marker for everyone else), a draft kept after its
 * stop press (`keep_on_stop`) and one that goes, and a private chat's topics as tabs; and, with
 * `switchyard sandbox` as a real process, the `/settings` panel's buttons render and press. Leaves
 * screenshots in test-output/sandbox-web-newer/.
 *
 * Without /usr/bin/chromium the file is skipped, unless SWITCHYARD_REQUIRE_BROWSER=1 (CI).
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTelegramServer, type TelegramServer } from '@switchyard/sandbox';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserRequired, haveBrowser, type OpenBrowser, openBrowser, typeMessage } from './browser.js';
import { type SandboxProcess, startSandboxProcess } from './sandbox-process.js';

const SHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test-output/sandbox-web-newer');

browserRequired('the web view of voice notes, disabled buttons, ephemeral messages and private topics');

describe.runIf(haveBrowser)('the sandbox web view and the newer Bot API parts', () => {
  let tg: TelegramServer;
  let url = '';
  let opened: OpenBrowser | undefined;

  /** A Bot API call as the bot makes it. */
  const call = async (method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${tg.apiRoot}/bot${tg.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
    });
    const body = (await res.json()) as { ok: boolean; description?: string; result?: { message_id: number } };
    if (!body.ok) throw new Error(`${method}: ${body.description}`);
    return body.result;
  };
  const page = (): Page => (opened as OpenBrowser).page;
  const openChat = async (chatId: number) => {
    await page().locator(`.chat-item[data-chat-id="${chatId}"]`).click();
  };

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    tg = createTelegramServer({ rateLimits: false, privateTopics: true });
    url = (await tg.start()).webUrl ?? '';
    opened = await openBrowser({ viewport: { width: 1100, height: 760 } });
  });

  afterAll(async () => {
    await opened?.close();
    await tg?.stop();
  });

  test('a voice note shows its player and length, and the transcript replies to it', async () => {
    const chat = tg.privateChat();
    const note = tg.sendVoice(chat.id, { data: new Uint8Array(3000).fill(7), duration: 3 });
    await call('sendMessage', {
      chat_id: chat.id,
      text: '🎤 “what is on the roadmap”',
      reply_parameters: { message_id: note.messageId },
      disable_notification: true,
    });
    await page().goto(url);
    await openChat(chat.id);
    const voice = page().locator('.msg.user .voice').last();
    await voice.waitFor();
    expect(await voice.locator('audio').count()).toBe(1);
    expect(await voice.locator('.duration').textContent()).toBe('🎤 0:03');
    const heard = page().locator('.msg.bot', { hasText: 'what is on the roadmap' }).last();
    await heard.waitFor();
    expect(await heard.locator('.quote').textContent()).toMatch(/^🎤 Voice message \(0:03\)/);
    await page().screenshot({ path: path.join(SHOTS, 'voice.png') });
  });

  test('a disabled button is shown and does nothing; the live one beside it (a settings button) presses', async () => {
    const chat = tg.privateChat();
    const sent = await call('sendMessage', {
      chat_id: chat.id,
      text: 'Settings for this conversation',
      reply_markup: {
        inline_keyboard: [
          [
            { text: 'Replies: rich ✓', disabled: {} },
            { text: 'Replies: classic', callback_data: 'set:classic' },
          ],
        ],
      },
    });
    await page().goto(url);
    await openChat(chat.id);
    const done = page().locator('.keyboard button', { hasText: 'Replies: rich ✓' });
    await done.waitFor();
    expect(await done.isDisabled()).toBe(true);
    const live = page().locator('.keyboard button', { hasText: 'Replies: classic' });
    expect(await live.isDisabled()).toBe(false);
    await live.click();
    const press = await tg.waitFor(() =>
      tg.chat(chat.id).messages.length > 0
        ? tg.pendingUpdates().find((u) => u.callback_query?.data === 'set:classic')
        : undefined,
    );
    expect(press.callback_query?.message?.message_id).toBe(sent?.message_id);
    await page().screenshot({ path: path.join(SHOTS, 'disabled.png') });
  });

  test('an ephemeral message is marked for its receiver; another member’s shows only that it is there', async () => {
    const eve = tg.addUser({ firstName: 'Eve' });
    const group = tg.createGroup({ title: 'team', supergroup: true });
    await call('sendMessage', {
      chat_id: group.id,
      text: 'Your status, for you alone',
      ephemeral_message_parameters: { receiver_user_id: tg.defaultUser.id },
    });
    await call('sendMessage', {
      chat_id: group.id,
      text: 'A refusal for Eve',
      ephemeral_message_parameters: { receiver_user_id: eve.id },
    });
    await page().goto(url);
    await openChat(group.id);
    const mine = page().locator('.msg.ephemeral', { hasText: 'Your status, for you alone' });
    await mine.waitFor();
    expect(await mine.locator('.only-you').count()).toBe(1);
    const theirs = page().locator('.ephemeral-other');
    expect(await theirs.textContent()).toBe('👁 A message only Eve sees');
    expect(await page().locator('#messages', { hasText: 'A refusal for Eve' }).count()).toBe(0);
    await page().screenshot({ path: path.join(SHOTS, 'ephemeral.png') });
  });

  test('a draft sent with keep_on_stop stays after ■ Stop; one without it goes', async () => {
    const chat = tg.privateChat(tg.addUser({ firstName: 'Ann' }));
    await page().goto(url);
    await openChat(chat.id);
    await call('sendMessageDraft', {
      chat_id: chat.id,
      draft_id: 5,
      text: 'half an answer',
      can_stop: true,
      keep_on_stop: true,
    });
    const draft = page().locator('.msg.draft', { hasText: 'half an answer' });
    await draft.waitFor();
    await draft.locator('.draft-stop').click();
    await draft.locator('.stopped').waitFor();
    expect(tg.chat(chat.id).stops).toHaveLength(1);
    await page().screenshot({ path: path.join(SHOTS, 'kept-draft.png') });
    await call('sendMessageDraft', { chat_id: chat.id, draft_id: 6, text: 'another try', can_stop: true });
    const gone = page().locator('.msg.draft', { hasText: 'another try' });
    await gone.waitFor();
    await gone.locator('.draft-stop').click();
    await gone.waitFor({ state: 'detached' });
  });

  test('a private chat’s topics are tabs, each showing its own messages', async () => {
    const chat = tg.privateChat(tg.addUser({ firstName: 'Tess' }));
    const topic = tg.createTopic(chat.id, 'Roadmap');
    tg.sendText(chat.id, 'in the roadmap topic', { threadId: topic.threadId });
    tg.sendText(chat.id, 'in the main chat');
    await page().goto(url);
    await openChat(chat.id);
    const tab = page().locator('#topics .tab', { hasText: 'Roadmap' });
    await tab.waitFor();
    expect(await page().locator('.msg.user', { hasText: 'in the roadmap topic' }).count()).toBe(0);
    await tab.click();
    await page().locator('.msg.user', { hasText: 'in the roadmap topic' }).waitFor();
    expect(await page().locator('.msg.user', { hasText: 'in the main chat' }).count()).toBe(0);
    // A private chat's topics are the bot's to open: no "+ Topic" there.
    expect(await page().locator('#topics .tab.add').count()).toBe(0);
    await page().screenshot({ path: path.join(SHOTS, 'private-topics.png') });
  });

  test('the page raised no errors', () => {
    expect((opened as OpenBrowser).pageErrors).toEqual([]);
  });
});

describe.runIf(haveBrowser)('the /settings panel in the sandbox web view', () => {
  let sandbox: SandboxProcess | undefined;
  let opened: OpenBrowser | undefined;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    sandbox = await startSandboxProcess({ env: { SWITCHYARD_SCRIPTED: '1' } });
    opened = await openBrowser({ viewport: { width: 1100, height: 760 } });
  });

  afterAll(async () => {
    await opened?.close();
    await sandbox?.stop();
  });

  test('renders as buttons, and a press changes the setting and redraws the panel', async () => {
    const page = (opened as OpenBrowser).page;
    await page.goto(sandbox?.url ?? '');
    await expect.poll(() => page.locator('#chat-title').textContent()).not.toBe('');
    await typeMessage(page, '/settings');
    const panel = page.locator('.msg.bot', { hasText: 'Settings of this conversation' }).last();
    await panel.waitFor({ timeout: 30_000 });
    const classic = page.locator('.keyboard button', { hasText: 'Classic replies' }).last();
    await classic.waitFor();
    expect(await classic.isDisabled()).toBe(false);
    await classic.click();
    await page
      .locator('.keyboard button', { hasText: '✓ Classic replies' })
      .last()
      .waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(SHOTS, 'settings.png') });
    expect((opened as OpenBrowser).pageErrors).toEqual([]);
  });
});
