/**
 * Headless Chromium for the sandbox's browser tests (Debian's `chromium`, driven by playwright-core): where
 * it is, whether the test must run (CI sets SWITCHYARD_REQUIRE_BROWSER=1), a fresh profile per run with
 * the flags a closed network needs, page errors collected, and the user's typing as the view sees it.
 * Not a test file itself.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { test } from 'vitest';

export const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? '/usr/bin/chromium';
export const haveBrowser = existsSync(CHROMIUM);
const requireBrowser = process.env.SWITCHYARD_REQUIRE_BROWSER === '1';
const MISSING = `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`;

/** The flags a closed network needs: no background connections, no sandbox as root, no GPU. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Registers what a browser test file does without Chromium: fail where it is required, else one skipped
 * test that says why. Call at the top level, beside `describe.runIf(haveBrowser)`.
 */
export function browserRequired(what: string): void {
  if (!haveBrowser && requireBrowser) {
    test(`${what} needs Chromium (SWITCHYARD_REQUIRE_BROWSER=1)`, () => {
      throw new Error(MISSING);
    });
  } else if (!haveBrowser) {
    test.skip(`${what}: skipped, ${MISSING}`, () => {});
  }
}

/** A browser with one page; `pageErrors` collects the page's exceptions and console errors. */
export interface OpenBrowser {
  browser: BrowserContext;
  page: Page;
  pageErrors: string[];
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile (playwright passes it as --user-data-dir). */
export async function openBrowser(
  options: Parameters<typeof chromium.launchPersistentContext>[1] = {},
): Promise<OpenBrowser> {
  const profile = mkdtempSync(path.join(tmpdir(), 'sy-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    ...options,
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  return {
    browser,
    page,
    pageErrors,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Types `text` as the user in the view and returns its message id once the view shows it. */
export async function typeMessage(page: Page, text: string): Promise<number> {
  await page.locator('#text').fill(text);
  await page.locator('#text').press('Enter');
  const mine = page.locator('.msg.user', { hasText: text }).last();
  await mine.waitFor();
  return Number(await mine.getAttribute('data-id'));
}
