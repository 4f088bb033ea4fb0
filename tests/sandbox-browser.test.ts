/**
 * The sandbox's web chat view in a real browser (Debian's headless Chromium, driven by playwright-core),
 * against `switchyard sandbox` as a real process with the scripted model: what a newcomer sees. Each step
 * leaves a screenshot in test-output/sandbox-browser/ for a person to look at.
 *
 * Without /usr/bin/chromium the file is skipped, unless SWITCHYARD_REQUIRE_BROWSER=1 (CI), where that is
 * a failure.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserRequired, haveBrowser, type OpenBrowser, openBrowser, typeMessage } from './browser.js';
import { type SandboxProcess, startSandboxProcess } from './sandbox-process.js';

const SHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test-output/sandbox-browser');

browserRequired('sandbox web view in a browser');

describe.runIf(haveBrowser)('the sandbox web view in headless Chromium', () => {
  let sandbox: SandboxProcess | undefined;
  let opened: OpenBrowser | undefined;
  let page: Page;
  let step = 0;
  let pageErrors: string[] = [];

  const shot = async (name: string) => {
    step += 1;
    await page.screenshot({ path: path.join(SHOTS, `${String(step).padStart(2, '0')}-${name}.png`) });
  };

  const say = (text: string): Promise<number> => typeMessage(page, text);

  /** The bot's messages after `afterId`, as the view shows them. */
  const botAfter = (afterId: number) =>
    page.evaluate(
      (after) =>
        [...document.querySelectorAll<HTMLElement>('#messages .msg.bot')]
          .filter((node) => Number(node.dataset.id) > after)
          .map((node) => ({
            id: Number(node.dataset.id),
            text: node.querySelector<HTMLElement>('.text')?.textContent ?? '',
          })),
      afterId,
    );

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    sandbox = await startSandboxProcess();
    opened = await openBrowser({
      viewport: { width: 1100, height: 760 },
    });
    ({ page, pageErrors } = opened);
  });

  afterAll(async () => {
    await opened?.close();
    await sandbox?.stop();
  });

  test('opens on the chat with the bot and marks the model as scripted', async () => {
    await page.goto(sandbox?.url ?? '');
    await expect.poll(() => page.locator('#banner').isVisible()).toBe(true);
    expect(await page.locator('#banner').textContent()).toMatch(/scripted/i);
    expect(await page.locator('#chat-title').textContent()).not.toBe('');
    // Bars with nothing to show stay out of the way.
    expect(await page.locator('#pinned-bar').isVisible()).toBe(false);
    expect(await page.locator('#topics').isVisible()).toBe(false);
    await shot('open');
  });

  test('the view opens from localhost with the printed key, and not without it', async () => {
    const printed = new URL(sandbox?.url ?? '');
    expect(printed.searchParams.get('k')).toMatch(/^[A-Za-z0-9_-]{24}$/);
    // localhost has no cookie of this run yet (the first test opened 127.0.0.1).
    const localhost = `http://localhost:${printed.port}/`;
    const other = await (opened as OpenBrowser).browser.newPage();
    try {
      expect((await other.goto(localhost))?.status()).toBe(403);
      expect(await other.textContent('body')).toContain('?k=');
      expect((await other.goto(`${localhost}?k=wrong`))?.status()).toBe(403);
      expect((await other.goto(`${localhost}?k=${printed.searchParams.get('k')}`))?.status()).toBe(200);
      await expect.poll(() => other.locator('#chat-title').textContent()).not.toBe('');
      // Reloaded without the key, the page still works: its first load set the run's cookie.
      expect((await other.goto(localhost))?.status()).toBe(200);
      await expect.poll(() => other.locator('#chat-title').textContent()).not.toBe('');
    } finally {
      await other.close();
    }
  });

  test('a table in an answer is shown as a table', async () => {
    const sent = await say('show me a table');
    // The draft shows the table as it grows; the answer is the message that holds it whole.
    const table = page.locator('#messages .msg.bot:not(.draft) table').last();
    await table.waitFor({ timeout: 30_000 });
    // The first message of a fresh sandbox may be answered by its placeholder, edited as it grows:
    // wait for the whole answer (its task list ends it).
    const message = page.locator('.msg.bot:not(.draft)', { has: page.locator('table') }).last();
    await expect.poll(() => message.locator('input[type="checkbox"]').count(), { timeout: 30_000 }).toBe(2);
    await expect.poll(() => page.locator('#messages .msg.draft').count(), { timeout: 30_000 }).toBe(0);
    await shot('table');
    expect(await table.locator('th').allInnerTexts()).toEqual(['train', 'from', 'to', 'on time']);
    expect(await table.locator('tbody tr').count()).toBe(3);
    expect(Number(await message.getAttribute('data-id'))).toBeGreaterThan(sent);
    expect(await message.locator('h2').textContent()).toBe('Trains today');
    expect(await message.locator('input[type="checkbox"]').count()).toBe(2);
  });

  test('a message: a live draft with a stop button grows into one rich message', async () => {
    // Long enough that the echo streams for a few seconds, so the view shows the draft growing.
    const sent = await say(
      'hello from the browser — this message is long enough that the echo takes a few seconds to stream back, draft after draft',
    );
    // Sample what the view shows, as a person watching would: the draft, then the bot's message.
    const drafts: string[] = [];
    let stopButton = false;
    let draftShot = false;
    const deadline = Date.now() + 30_000;
    for (;;) {
      // Read in one go: the draft leaves the view when the answer arrives.
      const draft = await page.evaluate(() => {
        const node = document.querySelector('#messages .msg.draft');
        return node
          ? {
              text: node.querySelector('.text')?.textContent ?? '',
              stop: !!node.querySelector('.draft-stop'),
            }
          : undefined;
      });
      if (draft) {
        const text = draft.text;
        if (drafts.at(-1) !== text) drafts.push(text);
        stopButton ||= draft.stop;
        if (!draftShot && /hello from/.test(text)) {
          draftShot = true;
          await shot('draft');
        }
      }
      const reply = (await botAfter(sent))[0];
      if (reply && /what I can do/.test(reply.text)) break;
      if (Date.now() > deadline)
        throw new Error(`no finished answer; drafts seen: ${JSON.stringify(drafts)}`);
      await page.waitForTimeout(40);
    }
    await shot('answer');
    expect(drafts.length, `the draft changed in view: ${JSON.stringify(drafts)}`).toBeGreaterThanOrEqual(2);
    expect(stopButton, 'the draft offered a stop button').toBe(true);
    const replies = await botAfter(sent);
    expect(replies, 'one message: no placeholder, no split').toHaveLength(1);
    expect(replies[0]?.text).toContain('hello from the browser');
    // The answer is the rich rendering: the quote and the italic hint; never edited.
    const answer = page.locator(`.msg[data-id="${replies[0]?.id}"]`);
    expect(await answer.locator('blockquote').count()).toBe(1);
    expect(await answer.locator('i').count()).toBeGreaterThan(0);
    expect(await answer.locator('.edited').count()).toBe(0);
  });

  test('the draft’s stop button ends the answer and keeps what was written', async () => {
    const sent = await say('count slowly');
    const stop = page.locator('#messages .msg.draft .draft-stop');
    await page.locator('#messages .msg.draft', { hasText: /Counting: 1, 2/ }).waitFor({ timeout: 30_000 });
    await shot('draft-before-stop');
    await stop.click();
    await expect
      .poll(async () => (await botAfter(sent)).find((m) => /Stopped/.test(m.text))?.text ?? '', {
        timeout: 30_000,
      })
      .toMatch(/Counting: 1, 2/);
    await shot('stopped');
    const answer = (await botAfter(sent)).find((m) => /Counting/.test(m.text));
    expect(answer?.text).not.toContain('99, 100');
  });

  test('a long turn: the progress card appears pinned and is unpinned when the turn ends', async () => {
    const sent = await say('long answer');
    const bar = page.locator('#pinned-bar');
    await bar.waitFor({ state: 'visible', timeout: 20_000 });
    const pinnedText = await bar.textContent();
    await shot('card-pinned');
    // The answer first, then the bar: a redraw can hide the bar for a moment while the card is pinned,
    // and a wait for "hidden" alone took that moment for the unpin (once, on a loaded machine).
    await expect
      .poll(async () => (await botAfter(sent)).some((m) => /Step 8 of a long answer/.test(m.text)), {
        timeout: 60_000,
      })
      .toBe(true);
    await bar.waitFor({ state: 'hidden', timeout: 30_000 });
    await shot('card-unpinned');
    expect(pinnedText).not.toBe('');
    // The pin was announced (silently) in the chat, as Telegram does.
    expect(await page.locator('.service', { hasText: /pinned/ }).count()).toBeGreaterThan(0);
  });

  test('a permission prompt: pressing Allow lets the tool run', async () => {
    const sent = await say('write a file');
    const allow = page.locator('.keyboard button', { hasText: /^✅ Allow$/ }).last();
    await allow.waitFor({ timeout: 30_000 });
    await shot('permission-prompt');
    await allow.click();
    await expect
      .poll(async () => (await botAfter(sent)).some((m) => /Done\. The tool said/.test(m.text)), {
        timeout: 30_000,
      })
      .toBe(true);
    await shot('permission-allowed');
    const written = path.join(sandbox?.dir ?? '', 'work', 'hello-from-switchyard.md');
    expect(readFileSync(written, 'utf8')).toContain('Written by the scripted model');
    // The pressed prompt no longer offers its buttons.
    expect(await page.locator('.keyboard button', { hasText: /^✅ Allow$/ }).count()).toBe(0);
  });

  test('a file upload reaches the agent', async () => {
    const content = `notes from the browser test ${Date.now()}\n`;
    await page.locator('#file').setInputFiles({
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(content),
    });
    await expect.poll(() => page.locator('#file-name').isVisible()).toBe(true);
    await shot('upload-chosen');
    const sent = await say('here is a file');
    const doc = page.locator(`.msg.user[data-id="${sent}"] .document`);
    expect(await doc.textContent()).toContain('notes.txt');
    await expect
      .poll(async () => (await botAfter(sent)).some((m) => /here is a file/.test(m.text)), {
        timeout: 30_000,
      })
      .toBe(true);
    await shot('upload-answered');
    // The gateway saved it in the agent's exchange directory under a generated name.
    const inbox = path.join(sandbox?.dir ?? '', 'state', 'files');
    const saved = readdirSync(inbox, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    expect(saved.some((f) => readFileSync(path.join(f.parentPath, f.name), 'utf8') === content)).toBe(true);
  });

  test('a picture the agent sends is shown inline in the chat', async () => {
    const sent = await say('send me a picture');
    const photo = page.locator('.msg.bot img.photo').last();
    await photo.waitFor({ timeout: 60_000 });
    await expect
      .poll(() =>
        photo.evaluate((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth),
      )
      .toBeGreaterThan(0);
    const message = page.locator('.msg.bot', { has: page.locator('img.photo') }).last();
    expect(Number(await message.getAttribute('data-id'))).toBeGreaterThan(sent);
    expect(await message.textContent()).toContain('A picture from the agent');
    await shot('photo-inline');
  });

  test('a forum with two topics: each topic is its own conversation, shown in its own tab', async () => {
    page.once('dialog', (dialog) => dialog.accept('Sandbox forum'));
    await page.locator('#new-forum').click();
    const tabs = page.locator('#topics');
    await tabs.waitFor({ state: 'visible' });
    // Only the General topic, as in Telegram.
    expect(await tabs.locator('[role="tab"]').allInnerTexts()).toEqual(['General']);
    // The composer says how to address the bot in a group.
    expect(await page.locator('#text').getAttribute('placeholder')).toContain('@switchyard_sandbox_bot');
    for (const name of ['First topic', 'Second topic']) {
      page.once('dialog', (dialog) => dialog.accept(name));
      await tabs.locator('button', { hasText: '+ Topic' }).click();
      await tabs.locator('[role="tab"]', { hasText: name }).waitFor();
    }

    await tabs.locator('[role="tab"]', { hasText: 'First topic' }).click();
    // Unaddressed talk in a group is not for the bot: no answer.
    const chatter = await say('just chatting here');
    const first = await say('@switchyard_sandbox_bot hello first topic');
    await expect
      .poll(async () => (await botAfter(first)).some((m) => /hello first topic/.test(m.text)), {
        timeout: 30_000,
      })
      .toBe(true);
    expect((await botAfter(chatter)).some((m) => /just chatting/.test(m.text))).toBe(false);

    await tabs.locator('[role="tab"]', { hasText: 'Second topic' }).click();
    const second = await say('@switchyard_sandbox_bot hello second topic');
    await expect
      .poll(async () => (await botAfter(second)).some((m) => /hello second topic/.test(m.text)), {
        timeout: 30_000,
      })
      .toBe(true);
    await shot('forum-topic');
    // Each topic shows only its own conversation (polled: the view redraws a tab after the click, and a
    // loaded machine can be slower at it than the answer was to arrive).
    await expect.poll(() => page.locator('.msg', { hasText: 'hello first topic' }).count()).toBe(0);
    await tabs.locator('[role="tab"]', { hasText: /^General$/ }).click();
    await expect.poll(() => page.locator('.msg', { hasText: 'hello' }).count()).toBe(0);
  });

  test('the page raised no errors, and Ctrl-C leaves nothing running', async () => {
    expect(pageErrors).toEqual([]);
    await opened?.close();
    opened = undefined;
    const stopped = await sandbox?.stop();
    sandbox = undefined;
    expect(stopped?.leftovers, 'processes left running after Ctrl-C').toEqual([]);
    expect(stopped?.exit).toBe(0);
  });
});
