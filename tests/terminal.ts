/**
 * The "terminal" of the terminal ⇄ phone tests: the real `claude` CLI run by hand, as a developer at the
 * desk would, in the agent's working directory with the agent's Claude config directory and the same
 * scripted Messages API, so its sessions are the ones the bridge lists, resumes and hands back.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { scriptedClaudeEnv } from '@switchyard/sandbox';
import { outputOf } from './processes.js';
import { botMessages, CLAUDE, type System } from './system.js';

/** The environment of the agent's own `claude` (its config dir, the scripted API). */
export function terminalEnv(system: System): NodeJS.ProcessEnv {
  const baseUrl = system.model.baseUrl;
  if (!baseUrl) throw new Error('the scripted model is not started');
  return {
    PATH: process.env.PATH,
    HOME: system.dir,
    ...scriptedClaudeEnv({ baseUrl, configDir: path.join(system.dir, 'claude-config') }),
  };
}

/** Runs `claude -p <prompt> [args]` in `cwd` (default the agent's workDir) to its end; its stdout. */
export function runTerminal(
  system: System,
  prompt: string,
  args: readonly string[] = [],
  cwd?: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE, ['-p', prompt, ...args], {
      cwd: cwd ?? path.join(system.dir, 'work'),
      env: terminalEnv(system),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = outputOf(child);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(output.out())
        : reject(new Error(`terminal claude exited ${code}: ${output.err().slice(-2000)}`)),
    );
  });
}

/** A `claude` left open at the terminal (stdin kept open, as an interactive session would stay). */
export interface OpenTerminal {
  readonly pid: number;
  /**
   * Resolves once `/proc` shows the process with `args` on its command line — what the bridge's claim scan
   * reads. Until the fork has exec'd, the pid's command line is the test runner's, and a bridge asked in that
   * moment rightly sees no terminal.
   */
  shown(): Promise<void>;
  /** Ends it and waits until it is gone. */
  close(): Promise<void>;
}

/** Starts `claude -p --input-format stream-json [args]` in `cwd` and leaves it running. */
export function openTerminal(system: System, args: readonly string[], cwd?: string): OpenTerminal {
  const child: ChildProcess = spawn(
    CLAUDE,
    ['-p', '--verbose', '--input-format', 'stream-json', '--output-format', 'stream-json', ...args],
    {
      cwd: cwd ?? path.join(system.dir, 'work'),
      env: terminalEnv(system),
      stdio: ['pipe', 'ignore', 'ignore'],
    },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start the terminal claude');
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid,
    async shown() {
      const deadline = Date.now() + 10_000;
      const want = args.join('\0');
      while (!readCmdline(pid).includes(want)) {
        if (Date.now() > deadline)
          throw new Error(`the terminal claude (pid ${pid}) never showed ${args.join(' ')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** `/proc/<pid>/cmdline`, empty once the process is gone. */
function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** The session id of a `claude -p --output-format json` run's output. */
export function sessionIdOf(output: string): string {
  const id = (JSON.parse(output) as { session_id?: unknown }).session_id;
  if (typeof id !== 'string') throw new Error(`no session id in ${output.slice(0, 200)}`);
  return id;
}

/** Waits until the bridge has connected to the gateway (commands not queued need the connection). */
export async function bridgeConnected(system: System, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!/"service":"gateway"[^\n]*"event":"bridge_connection","connected":true/.test(system.logs())) {
    if (Date.now() > deadline) throw new Error('the bridge did not connect');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits for the bot's first message in `chatId` matching `match`; a timeout names what the chat shows. */
export async function botSays(
  system: System,
  chatId: number,
  match: (text: string) => boolean,
  timeoutMs = 90_000,
  /** Only messages after this one. */
  after = 0,
): Promise<ReturnType<typeof botMessages>[number]> {
  try {
    return await system.telegram.waitFor(
      () => botMessages(system.telegram, chatId).find((m) => m.messageId > after && match(m.text)),
      {
        timeoutMs,
      },
    );
  } catch (err) {
    const shown = system.telegram.messages(chatId).map((m) => `${m.from}: ${m.text.slice(0, 300)}`);
    throw new Error(`${(err as Error).message}; the chat shows:\n${shown.join('\n')}`);
  }
}
