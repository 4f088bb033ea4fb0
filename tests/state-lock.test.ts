/**
 * A second copy of a service on a running agent's state directory refuses and changes nothing: a
 * second sandbox (which used to announce itself and delete the first one's state, so the first stopped
 * answering), a second gateway and a second bridge on the sandbox's state. Each names the holder's pid
 * and exits non-zero, and the first sandbox answers a message sent after all three refusals.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';
import { chatWith, type SandboxProcess, startSandboxProcess } from './sandbox-process.js';
import { MAIN } from './system.js';

const ANSWER_BUDGET_MS = 60_000;
let sandbox: SandboxProcess | undefined;

afterAll(async () => {
  await sandbox?.stop();
});

/** Runs the built command to its end; resolves with its exit code and everything it wrote. */
async function runToEnd(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [MAIN, ...args], {
      env: { ...process.env, ...env },
      timeout: 30_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** The pid in a service's lock file. */
function holderPid(stateDir: string): number {
  return (JSON.parse(readFileSync(path.join(stateDir, 'switchyard.lock'), 'utf8')) as { pid: number }).pid;
}

test('a second sandbox, gateway or bridge on a running state directory refuses; the first keeps answering', async () => {
  sandbox = await startSandboxProcess({ timeoutMs: ANSWER_BUDGET_MS });
  expect(await chatWith(sandbox, 'before the others')).toContain('before the others');
  const dir = sandbox.dir;
  const env = { SWITCHYARD_SCRIPTED: '1', SWITCHYARD_SANDBOX_PORT: '0', SWITCHYARD_SANDBOX_DIR: dir };

  const second = await runToEnd(['sandbox'], env);
  expect(second.code).not.toBe(0);
  expect(second.output).toContain(`running sandbox (pid ${sandbox.pid}`);
  expect(second.output).not.toMatch(/the sandbox is running/);

  const config = path.join(dir, 'switchyard.yaml');
  for (const service of ['gateway', 'bridge'] as const) {
    const holder = holderPid(path.join(dir, 'state', service));
    const again = await runToEnd(['--config', config, service, 'sandbox'], {});
    expect(again.code, again.output).not.toBe(0);
    expect(again.output).toContain(`running ${service} (pid ${holder}`);
  }

  expect(await chatWith(sandbox, 'after the refusals')).toContain('after the refusals');
  const report = await sandbox.stop();
  sandbox = undefined;
  expect(report.leftovers).toEqual([]);
  expect(report.exit).toBe(0);
}, 180_000);
