/**
 * What the sandbox's web view does on the first day, in headless Chromium against the stand-in Telegram
 * in this process (no gateway, no Claude: the bot's messages are raw Bot API calls), each a failure a
 * newcomer met (issue 31):
 * - the list follows new messages after a tall one and after a picture loads; a reader who scrolled up
 *   stays there when a picture loads or a bot message comes before the view saw their scroll event, and
 *   the user's own new message is scrolled into view even when they had scrolled up;
 * - a 10,000-character message is refused as Telegram's clients refuse it, and what was typed stays;
 * - a tab left open across a restart of the sandbox says it restarted and how to get back in (not "is it
 *   still running?" forever), and a send it cannot make keeps what was typed.
 * Leaves screenshots in test-output/sandbox-view/.
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

const SHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test-output/sandbox-view');

browserRequired('the sandbox web view following, refusing and recovering');

/** A `width` × `height` BMP of one colour: a picture with a real height, no encoder needed. */
function bmp(width: number, height: number): Uint8Array {
  const row = Math.ceil((width * 3) / 4) * 4;
  const size = 54 + row * height;
  const b = Buffer.alloc(size);
  b.write('BM', 0, 'ascii');
  b.writeUInt32LE(size, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(width, 18);
  b.writeInt32LE(height, 22);
  b.writeUInt16LE(1, 26);
  b.writeUInt16LE(24, 28);
  b.writeUInt32LE(row * height, 34);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) b.set([200, 120, 40], 54 + y * row + x * 3);
  return b;
}

describe.runIf(haveBrowser)('the sandbox web view on the first day', () => {
  let tg: TelegramServer;
  let url = '';
  let opened: OpenBrowser | undefined;
  const page = (): Page => (opened as OpenBrowser).page;

  /** A Bot API call as the bot makes it. */
  const call = async (method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${tg.apiRoot}/bot${tg.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
    });
    const body = (await res.json()) as { ok: boolean; description?: string };
    if (!body.ok) throw new Error(`${method}: ${body.description}`);
  };
  /** How far the message list is from showing its end, in pixels (0: it shows the end). */
  const fromEnd = () =>
    page().evaluate(() => {
      const box = document.getElementById('messages') as HTMLElement;
      return Math.round(box.scrollHeight - box.scrollTop - box.clientHeight);
    });
  const shown = (text: string) => page().locator('.msg', { hasText: text }).last().waitFor();

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    tg = createTelegramServer({ rateLimits: false });
    url = (await tg.start()).webUrl ?? '';
    opened = await openBrowser({ viewport: { width: 1000, height: 700 } });
    await page().goto(url);
    await page().waitForFunction(() => document.getElementById('chat-title')?.textContent !== '');
  });

  afterAll(async () => {
    await opened?.close();
    await tg?.stop();
  });

  test('follows new messages after a tall one and after a picture, and shows the user’s own new message', async () => {
    const chatId = tg.privateChat().id;
    for (let i = 1; i <= 20; i++) await call('sendMessage', { chat_id: chatId, text: `line ${i}` });
    await shown('line 20');
    await expect.poll(fromEnd).toBeLessThan(2);
    const tall = Array.from({ length: 60 }, (_, i) => `row ${i + 1} of a tall message`).join('\n');
    await call('sendMessage', { chat_id: chatId, text: tall });
    await call('sendMessage', { chat_id: chatId, text: 'after the tall one' });
    await shown('after the tall one');
    await expect.poll(fromEnd).toBeLessThan(2);

    // A picture has no height until it loads; the list must still show its end afterwards.
    tg.sendPhoto(chatId, { data: bmp(300, 600), caption: 'a tall picture' });
    const img = page().locator('img.photo').last();
    await expect.poll(() => img.evaluate((i) => (i as HTMLImageElement).naturalHeight)).toBe(600);
    await expect.poll(fromEnd).toBeLessThan(2);
    await call('sendMessage', { chat_id: chatId, text: 'after the picture' });
    await shown('after the picture');
    await expect.poll(fromEnd).toBeLessThan(2);
    await page().screenshot({ path: path.join(SHOTS, 'follows.png') });

    // The reader scrolls up: a picture that finishes loading, or a new bot message, leaves them where they
    // are… The scroll event that tells the view comes with the next frame, and a picture's load event or a
    // new message can come before it (a loaded machine gives that order now and then): here the picture's
    // load comes in the same task as the reader's scroll, so that order is the one every run sees.
    const afterLoad = await page()
      .locator('#messages')
      .evaluate((box) => {
        box.scrollTop = 0;
        box.querySelector('img.photo')?.dispatchEvent(new Event('load'));
        return box.scrollTop;
      });
    expect(afterLoad).toBeLessThan(50);
    await expect.poll(fromEnd).toBeGreaterThan(500);
    await call('sendMessage', { chat_id: chatId, text: 'while you read above' });
    await shown('while you read above');
    expect(
      await page()
        .locator('#messages')
        .evaluate((box) => box.scrollTop),
    ).toBeLessThan(50);
    // …and their own new message brings them to it.
    await typeMessage(page(), 'my own new message');
    await expect.poll(fromEnd).toBeLessThan(2);
  });

  test('refuses a 10,000-character message as Telegram does, and keeps what was typed', async () => {
    const chatId = tg.privateChat().id;
    const before = tg.messages(chatId).length;
    const text = 'x'.repeat(10_000);
    await page().locator('#text').fill(text);
    await page().locator('#text').press('Enter');
    await expect.poll(() => page().locator('#toast').textContent()).toMatch(/at most 4,096 characters/);
    expect(await page().locator('#text').inputValue()).toBe(text);
    expect(tg.messages(chatId)).toHaveLength(before);
    await page().locator('#text').fill('');
  });

  test('a tab left open across a restart says so and how to reopen; a send it cannot make keeps the text', async () => {
    const port = new URL(url).port;
    await tg.stop();
    // The sandbox comes back on the same address with a new run key, as `start` does.
    tg = createTelegramServer({ rateLimits: false, port: Number(port) });
    const restarted = (await tg.start()).webUrl ?? '';
    expect(new URL(restarted).searchParams.get('k')).not.toBe(new URL(url).searchParams.get('k'));
    const status = page().locator('#chat-status');
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toMatch(/sandbox restarted/);
    expect(await status.textContent()).toContain('?k=');
    await page().screenshot({ path: path.join(SHOTS, 'restarted.png') });
    await page().locator('#text').fill('typed in the old tab');
    await page().locator('#text').press('Enter');
    await page().waitForTimeout(500);
    expect(await page().locator('#text').inputValue()).toBe('typed in the old tab');
    // The address printed for the new run opens the view again.
    await page().goto(restarted);
    await expect.poll(() => status.textContent()).not.toMatch(/restarted|not connected/);
  });
});
