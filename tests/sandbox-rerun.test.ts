/**
 * The newcomer's second minute: `pnpm start`, chat, Ctrl-C, `pnpm start` again on the same directory.
 * The stand-in Telegram numbers updates and messages from 1 on every run; the gateway's SQLite drops
 * ids it has seen, so a second run that kept the first run's state answered nothing, silently. Each
 * run must answer, and a Ctrl-C delivered twice (the terminal's, then the one `pnpm` forwards) must
 * still exit 0. Each run has a bot token of its own (it was a fixed public one, on a fixed port, which a
 * page rebound to 127.0.0.1 could use: issue 27), and its Bot API answers no rebound host name.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { chatWith, type SandboxProcess, startSandboxProcess } from './sandbox-process.js';

const ANSWER_BUDGET_MS = 60_000;
const dir = mkdtempSync(path.join(tmpdir(), 'sy-sandbox-rerun-'));
let sandbox: SandboxProcess | undefined;

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a second run on the same directory answers too, with a bot token of its own, and a doubled Ctrl-C exits 0', async () => {
  sandbox = await startSandboxProcess({ dir, timeoutMs: ANSWER_BUDGET_MS });
  expect(sandbox.output()).toMatch(/SCRIPTED model/);
  expect(await chatWith(sandbox, 'first run')).toContain('first run');
  const firstToken = sandbox.botToken();
  expect(firstToken).not.toBe('1000001:sandbox-token-not-a-secret-0000');
  const { port } = new URL(sandbox.url);
  // getMe to the sandbox's own name (a getUpdates would end the gateway's poll with a 409)...
  expect(await botApiStatus(port, firstToken, `127.0.0.1:${port}`, 'getMe')).toBe(200);
  // ...and the rebinding page's getUpdates, refused before it reaches the poll.
  expect(await botApiStatus(port, firstToken, `evil.example:${port}`, 'getUpdates?timeout=0')).toBe(403);
  const first = await sandbox.stop({ echo: true });
  sandbox = undefined;
  expect(first.leftovers).toEqual([]);
  expect(first.exit).toBe(0);
  // The first run's state is on disk: this is the case that used to fail.
  expect(readdirSync(path.join(dir, 'state'))).toContain('gateway');

  sandbox = await startSandboxProcess({ dir, timeoutMs: ANSWER_BUDGET_MS });
  expect(await chatWith(sandbox, 'second run')).toContain('second run');
  expect(sandbox.output()).toMatch(/fresh chat/);
  expect(sandbox.botToken()).not.toBe(firstToken);
  const second = await sandbox.stop({ echo: true });
  sandbox = undefined;
  expect(second.leftovers).toEqual([]);
  expect(second.exit).toBe(0);
}, 180_000);

/** The status of a Bot API call to the sandbox on `port` whose Host header is `host` (fetch cannot set it). */
function botApiStatus(port: string, token: string, host: string, method: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: Number(port), path: `/bot${token}/${method}`, headers: { host } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
