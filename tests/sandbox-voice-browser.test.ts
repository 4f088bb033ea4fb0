/**
 * A voice message in the sandbox, as a newcomer sends one: `switchyard sandbox` as a real process with
 * the scripted model and its stand-in transcriber, and the web view in headless Chromium. An audio file
 * attached in the view goes as a voice message, is shown as one (a player and its length), and the bot's
 * quiet reply shows what was heard. Leaves a screenshot in test-output/sandbox-voice/.
 *
 * Without /usr/bin/chromium the file is skipped, unless SWITCHYARD_REQUIRE_BROWSER=1 (CI).
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SAYS_MARKER } from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserRequired, haveBrowser, type OpenBrowser, openBrowser } from './browser.js';
import { type SandboxProcess, startSandboxProcess } from './sandbox-process.js';

const SHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test-output/sandbox-voice');

browserRequired('sandbox voice message in a browser');

describe.runIf(haveBrowser)('a voice message in the sandbox web view', () => {
  let sandbox: SandboxProcess | undefined;
  let opened: OpenBrowser | undefined;

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    sandbox = await startSandboxProcess({ env: { SWITCHYARD_SCRIPTED: '1' } });
    opened = await openBrowser({ viewport: { width: 1100, height: 760 } });
  });

  afterAll(async () => {
    await opened?.close();
    await sandbox?.stop();
  });

  test('an attached audio file goes as a voice message, and the transcript is shown as a reply to it', async () => {
    const page = (opened as OpenBrowser).page;
    await page.goto(sandbox?.url ?? '');
    await expect.poll(() => page.locator('#chat-title').textContent()).not.toBe('');
    const recording = Buffer.concat([
      Buffer.from('OggS\0\x02\0\0'),
      Buffer.from(`${SAYS_MARKER}what is on the roadmap\n`),
      Buffer.alloc(4000, 1),
    ]);
    await page.locator('#file').setInputFiles({ name: 'note.ogg', mimeType: 'audio/ogg', buffer: recording });
    await page.locator('#send').click();
    const note = page.locator('.msg.user .voice').last();
    await note.waitFor({ timeout: 30_000 });
    expect(await note.locator('audio').count()).toBe(1);
    expect(await note.locator('.duration').textContent()).toBe('🎤 0:02');
    const heard = page.locator('.msg.bot', { hasText: '🎤 “what is on the roadmap”' }).last();
    await heard.waitFor({ timeout: 60_000 });
    // The reply quotes the voice message it transcribes.
    expect(await heard.locator('.quote').textContent()).toMatch(/^🎤 Voice message \(0:02\)/);
    await page.screenshot({ path: path.join(SHOTS, 'voice.png') });
    expect((opened as OpenBrowser).pageErrors).toEqual([]);
  });
});
