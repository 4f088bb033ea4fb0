/**
 * The sandbox web view on a phone (a 390 px wide viewport, in Debian's headless Chromium) against
 * `switchyard sandbox` as a real process with the scripted model. At that width the 280 px sidebar used
 * to stay beside the chat, leaving it ~110 px, one word a line: now the chat takes the screen and the
 * chat list is a page of its own. The same page also shows what people saw wrong there: a reload just
 * after an answer showed the answer's last draft under it with a live ■ Stop; the chat list showed a
 * rich answer's raw Markdown; a pin notice cut an emoji in half; the sample picture was 1×1 (an empty
 * bubble); the offline hint named `switchyard sandbox`, a command a checkout does not have on PATH.
 * Screenshots go to test-output/sandbox-phone/.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserRequired, haveBrowser, type OpenBrowser, openBrowser, typeMessage } from './browser.js';
import { type SandboxProcess, startSandboxProcess } from './sandbox-process.js';

const SHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test-output/sandbox-phone');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

browserRequired('sandbox web view on a phone');

describe.runIf(haveBrowser)('the sandbox web view at a 390 px viewport', () => {
  let sandbox: SandboxProcess | undefined;
  let opened: OpenBrowser | undefined;
  let page: Page;
  let pageErrors: string[] = [];
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

  const say = (text: string): Promise<number> => typeMessage(page, text);

  /** Calls the stand-in Bot API as the sandbox's bot. */
  const botApi = async (
    method: string,
    params: Record<string, unknown>,
    attempt = 0,
  ): Promise<{ message_id: number }> => {
    // The run's own token, as its gateway has it: the test pins a message as the bot would.
    const res = await fetch(`${new URL(sandbox?.url ?? '').origin}/bot${sandbox?.botToken()}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
    });
    const body = (await res.json()) as {
      ok: boolean;
      result: { message_id: number };
      parameters?: { retry_after?: number };
    };
    // A bot waits out a 429 as Telegram asks: the chat's own answers may have spent its allowance.
    if (!body.ok && body.parameters?.retry_after !== undefined && attempt < 3) {
      await new Promise((resolve) => setTimeout(resolve, (body.parameters?.retry_after ?? 1) * 1000));
      return botApi(method, params, attempt + 1);
    }
    expect(body.ok, JSON.stringify(body)).toBe(true);
    return body.result;
  };

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    sandbox = await startSandboxProcess();
    opened = await openBrowser({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 1,
    });
    ({ page, pageErrors } = opened);
  });

  afterAll(async () => {
    await opened?.close();
    await sandbox?.stop();
  });

  test('the chat takes the whole width and its text reads in lines, not a word a line', async () => {
    await page.goto(sandbox?.url ?? '');
    const welcome = page.locator('.msg.bot', { hasText: 'Say one of these' }).first();
    await welcome.waitFor({ timeout: 30_000 });
    await shot('01-chat');
    expect(await page.locator('#sidebar').isVisible()).toBe(false);
    const chat = await page.locator('#chat').boundingBox();
    expect(chat?.width).toBeGreaterThanOrEqual(380);
    const bubble = await welcome.boundingBox();
    expect(bubble?.width).toBeGreaterThan(300);
    // No horizontal scrolling of the page.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });

  test('a reload right after an answer shows no stale draft and no stop button', async () => {
    const sent = await say('show me a table');
    const answer = page.locator('.msg.bot:not(.draft)', { has: page.locator('table') }).last();
    await expect.poll(() => answer.locator('input[type="checkbox"]').count(), { timeout: 30_000 }).toBe(2);
    expect(Number(await answer.getAttribute('data-id'))).toBeGreaterThan(sent);
    await page.reload();
    await page
      .locator('.msg.bot', { has: page.locator('table') })
      .last()
      .waitFor();
    await shot('02-reloaded');
    expect(await page.locator('#messages .msg.draft').count()).toBe(0);
    expect(await page.locator('.draft-stop').count()).toBe(0);
  });

  test('the chat list is a page of its own, with the words of a rich answer, not its Markdown', async () => {
    const chatId = Number(await page.locator('.chat-item').first().getAttribute('data-chat-id'));
    const markdown = '## Trains today\n\n| train | from |\n|:--|:--|\n| IC 101 | Basel |\n\n- [x] loaded';
    await botApi('sendRichMessage', { chat_id: chatId, rich_message: { markdown } });
    await page.locator('.msg.bot h2', { hasText: 'Trains today' }).last().waitFor();
    await page.locator('#show-chats').click();
    await page.locator('#sidebar').waitFor({ state: 'visible' });
    await shot('03-chat-list');
    expect(await page.locator('#chat').isVisible()).toBe(false);
    const list = await page.locator('#sidebar').boundingBox();
    expect(list?.width).toBeGreaterThanOrEqual(380);
    const snippet = (await page.locator('.chat-item .snippet').first().textContent()) ?? '';
    expect(snippet).toBe('Trains today train from IC 101 Basel loaded');
    await page.locator('.chat-item').first().click();
    await page.locator('#chat').waitFor({ state: 'visible' });
    expect(await page.locator('#sidebar').isVisible()).toBe(false);
  });

  test('a pin notice cuts its quote on whole characters', async () => {
    const chatId = Number(await page.locator('.chat-item').first().getAttribute('data-chat-id'));
    // The emoji's two UTF-16 halves straddle the 40th unit, where the notice cuts.
    const { message_id } = await botApi('sendMessage', {
      chat_id: chatId,
      text: `${'x'.repeat(39)}🚆 on time`,
    });
    await botApi('pinChatMessage', { chat_id: chatId, message_id, disable_notification: true });
    const notice = page.locator('.service', { hasText: 'pinned “xxx' }).last();
    await notice.waitFor({ timeout: 10_000 });
    await shot('04-pin-notice');
    const text = (await notice.textContent()) ?? '';
    expect(text).not.toMatch(LONE_SURROGATE);
    expect(text).not.toContain('\uFFFD');
    expect(text).toContain('🚆…');
    await botApi('unpinChatMessage', { chat_id: chatId, message_id });
  });

  test('the sample picture the agent sends is a picture one can see', async () => {
    const sent = await say('send me a picture');
    const photo = page.locator('.msg.bot img.photo').last();
    await photo.waitFor({ timeout: 60_000 });
    await expect
      .poll(() =>
        photo.evaluate((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth),
      )
      .toBeGreaterThanOrEqual(64);
    const box = await photo.boundingBox();
    expect(box?.width).toBeGreaterThanOrEqual(64);
    const message = page.locator('.msg.bot', { has: page.locator('img.photo') }).last();
    expect(Number(await message.getAttribute('data-id'))).toBeGreaterThan(sent);
    await shot('05-picture');
  });

  test('the page raised no errors', () => {
    expect(pageErrors).toEqual([]);
  });

  test('with the sandbox stopped, the page says how to start it again in a checkout', async () => {
    const report = await sandbox?.stop();
    sandbox = undefined;
    expect(report?.leftovers).toEqual([]);
    const status = page.locator('#chat-status.offline');
    await status.waitFor({ timeout: 15_000 });
    await shot('06-offline');
    const text = (await status.textContent()) ?? '';
    expect(text).toContain('npx -y pnpm@12.4.2 start');
    expect(text).not.toContain('switchyard sandbox');
  });
});
