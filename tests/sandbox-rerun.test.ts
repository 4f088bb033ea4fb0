/**
 * The newcomer's second minute: `pnpm start`, chat, Ctrl-C, `pnpm start` again on the same directory.
 * The stand-in Telegram numbers updates and messages from 1 on every run; the gateway's SQLite drops
 * ids it has seen, so a second run that kept the first run's state answered nothing, silently. Each
 * run must answer, and a Ctrl-C delivered twice (the terminal's, then the one `pnpm` forwards) must
 * still exit 0.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
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

test('a second run on the same directory answers too, and a doubled Ctrl-C exits 0', async () => {
  sandbox = await startSandboxProcess({ dir, timeoutMs: ANSWER_BUDGET_MS });
  expect(sandbox.output()).toMatch(/SCRIPTED model/);
  expect(await chatWith(sandbox, 'first run')).toContain('first run');
  const first = await sandbox.stop({ echo: true });
  sandbox = undefined;
  expect(first.leftovers).toEqual([]);
  expect(first.exit).toBe(0);
  // The first run's state is on disk: this is the case that used to fail.
  expect(readdirSync(path.join(dir, 'state'))).toContain('gateway');

  sandbox = await startSandboxProcess({ dir, timeoutMs: ANSWER_BUDGET_MS });
  expect(await chatWith(sandbox, 'second run')).toContain('second run');
  expect(sandbox.output()).toMatch(/fresh chat/);
  const second = await sandbox.stop({ echo: true });
  sandbox = undefined;
  expect(second.leftovers).toEqual([]);
  expect(second.exit).toBe(0);
}, 180_000);
