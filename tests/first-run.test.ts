/**
 * The first run of a real bot, as the README tells it: its example config, copied from README.md
 * itself, with the token's variable unset ends at once with the message and status 2 (it used to
 * restart the gateway every 0.5 … 30 s forever), and with it set reaches the Bot API (the local stand-in
 * here). `switchyard run` ends the same way when the gateway itself refuses the config, and runs an
 * agent whose token is a systemd credential on a host without systemd (it reads the file the unit would).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTelegramServer, type TelegramServer } from '@switchyard/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outputOf } from './processes.js';
import { MAIN } from './system.js';

const TOKEN = '4242:first-run-token-not-a-secret-00000';
const root = path.resolve(path.dirname(MAIN), '../../..');

/** The YAML block under "With a real bot" in README.md, as a newcomer copies it. */
function readmeExample(): string {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### With a real bot'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no yaml block under "With a real bot"');
  return block;
}

interface Started {
  child: ChildProcess;
  exited: Promise<{ code: number | null; ms: number }>;
  output: ReturnType<typeof outputOf>;
}

describe('the first run of a real bot', () => {
  let dir = '';
  let telegram: TelegramServer;
  let apiRoot = '';
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sy-first-'));
    telegram = createTelegramServer({ token: TOKEN });
    ({ apiRoot } = await telegram.start());
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await gone;
      }
    }
    await telegram.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (args: string[], env: NodeJS.ProcessEnv): Started => {
    const began = performance.now();
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: dir,
      env: { ...env, SWITCHYARD_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const output = outputOf(child);
    const exited = new Promise<{ code: number | null; ms: number }>((resolve) =>
      child.once('exit', (code) => resolve({ code, ms: performance.now() - began })),
    );
    return { child, exited, output };
  };
  /** The exit, or `running` after `ms`: a command that restarts a refused service never exits on its own. */
  const exitWithin = (started: Started, ms: number) =>
    Promise.race([
      started.exited,
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), ms)),
    ]);
  /**
   * How long the command takes to start and print its help on this host now: "within a second" is a
   * second beyond that, so a busy CI host (node alone can take a second there) does not fail the test.
   */
  const startupMs = async (): Promise<number> => {
    const help = start(['help'], process.env);
    const { ms } = await help.exited;
    return ms;
  };
  /**
   * Whether a refusal that took `ms` came within a second of starting: against the slower of two help
   * runs, one before the refusal (`before`) and one now, doubled, since the load on a shared host changes
   * in seconds and slows a command that loads more than `help` does by more than its share (a refusal took
   * 1,952 ms against help runs of 553 ms beside a full suite). A supervisor that restarted instead would
   * not exit at all (`exitWithin` gives it 10 s).
   */
  const withinASecond = async (ms: number, before: number): Promise<void> => {
    const startup = Math.max(before, await startupMs());
    expect(ms).toBeLessThan(2 * startup + 1_000);
  };
  const envWithout = (...names: string[]): NodeJS.ProcessEnv => {
    const env = { ...process.env };
    for (const name of names) delete env[name];
    return env;
  };
  const reachedTelegram = async (started: Started) => {
    const deadline = Date.now() + 30_000;
    // The token as Telegram checks it: a finished getMe (a long poll is logged only when it returns).
    while (!telegram.calls('getMe').some((call) => call.ok)) {
      if (started.child.exitCode !== null) throw new Error(`exited early:\n${started.output.err()}`);
      if (Date.now() > deadline) throw new Error(`never polled:\n${started.output.err()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("the README's example: unset variable exits 2 with the message within a second; set, it reaches the Bot API", async () => {
    const work = path.join(dir, 'work');
    mkdirSync(work);
    // Word for word, but for the working directory and the Bot API (the stand-in instead of Telegram).
    const example = readmeExample();
    expect(example).toContain('token: { env: DEMO_BOT_TOKEN }');
    writeFileSync(
      path.join(dir, 'switchyard.yaml'),
      `${example.replace('/srv/agents/demo', work)}    apiRoot: ${apiRoot}\n`,
    );

    const startup = await startupMs();
    const unset = start(['up'], envWithout('DEMO_BOT_TOKEN'));
    const ended = await exitWithin(unset, 10_000);
    if (ended === 'running') throw new Error(`still running after 10 s:\n${unset.output.err()}`);
    const { code, ms } = ended;
    expect(code, unset.output.err()).toBe(2);
    expect(unset.output.err()).toContain(
      'agents(demo).token: environment variable DEMO_BOT_TOKEN is empty or missing',
    );
    await withinASecond(ms, startup);
    expect(telegram.calls()).toEqual([]);

    const set = start(['up'], { ...process.env, DEMO_BOT_TOKEN: TOKEN });
    await reachedTelegram(set);
    set.child.kill('SIGINT');
    expect((await set.exited).code).toBe(0);
  });

  it('`run` ends with status 2 when the gateway refuses its config, instead of restarting it', async () => {
    // The token is fine; the voice key's variable is not: only the gateway reads it.
    writeFileSync(
      path.join(dir, 'switchyard.yaml'),
      [
        'agents:',
        '  - name: demo',
        `    token: "${TOKEN}"`,
        `    apiRoot: ${apiRoot}`,
        '    allow: [1]',
        `    workDir: ${dir}`,
        '    voice: { url: "http://127.0.0.1:9/v1", model: whisper-1, key: { env: SY_FIRST_RUN_VOICE_KEY } }',
        '',
      ].join('\n'),
    );
    const run = start(['run', 'demo'], envWithout('SY_FIRST_RUN_VOICE_KEY'));
    const ended = await exitWithin(run, 10_000);
    if (ended === 'running') throw new Error(`still running after 10 s:\n${run.output.err()}`);
    const { code, ms } = ended;
    expect(code, run.output.err()).toBe(2);
    expect(run.output.err()).toContain('SY_FIRST_RUN_VOICE_KEY');
    expect(run.output.err()).toContain(
      'the gateway of agent "demo" refused the config and was not restarted',
    );
    expect(ms).toBeLessThan(10_000);
    // Started once, never again.
    const started = run.output
      .out()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { event?: string; service?: string })
      .filter((line) => line.event === 'service_started' && line.service === 'gateway');
    expect(started).toHaveLength(1);
  });

  it('`run` with a { credential } token reads the file the gateway unit would load, and says so when it cannot', async () => {
    const etc = path.join(dir, 'etc');
    writeFileSync(
      path.join(dir, 'switchyard.yaml'),
      [
        'agents:',
        '  - name: ops',
        '    token: { credential: telegram-token }',
        `    apiRoot: ${apiRoot}`,
        '    allow: [1]',
        `    workDir: ${dir}`,
        '',
      ].join('\n'),
    );
    const env = { ...envWithout('CREDENTIALS_DIRECTORY'), SWITCHYARD_ETC: etc };
    const startup = await startupMs();
    const missing = start(['run', 'ops'], env);
    const refused = await exitWithin(missing, 10_000);
    if (refused === 'running') throw new Error(`still running after 10 s:\n${missing.output.err()}`);
    expect(refused.code, missing.output.err()).toBe(2);
    expect(missing.output.err()).toContain(
      `credential telegram-token is loaded by the gateway unit from ${etc}/credentials/ops.token`,
    );
    expect(missing.output.err()).toContain('run it as root (sudo switchyard run ops)');
    await withinASecond(refused.ms, startup);

    mkdirSync(path.join(etc, 'credentials'), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(etc, 'credentials', 'ops.token'), `${TOKEN}\n`, { mode: 0o600 });
    const run = start(['run', 'ops'], env);
    await reachedTelegram(run);
    run.child.kill('SIGINT');
    expect((await run.exited).code).toBe(0);
  });
});
