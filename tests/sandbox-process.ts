/**
 * `switchyard sandbox` as a real process, the way a newcomer runs it: the built command with the scripted
 * model on a free port and a fresh state directory. The sandbox tests drive it through its web view only
 * (the HTTP API here, or a browser), never through the server's in-process handle.
 *
 * `stop()` is the user's Ctrl-C (SIGINT to the sandbox process, which stops the gateway, the bridge and
 * Claude), then a look at /proc for anything still running from the sandbox directory; what is found is
 * killed and reported, so a test can fail on it without leaving processes behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { killAll, processesOf } from './processes.js';
import { MAIN } from './system.js';

/** A running sandbox and how long it took to come up. */
export interface SandboxProcess {
  /** The web view's URL as the command printed it, with the run's key: `http://127.0.0.1:<port>/?k=<key>`. */
  url: string;
  /** SWITCHYARD_SANDBOX_DIR: config, work and state directories. */
  dir: string;
  pid: number;
  /** Milliseconds from spawn to the "Open <url>" line. */
  urlAfterMs: number;
  /** When the process was spawned (`performance.now()`). */
  spawnedAt: number;
  /** Everything the sandbox and its services wrote (stdout and stderr). */
  output(): string;
  /** This run's bot token, from the config the sandbox wrote for its gateway (new on every run). */
  botToken(): string;
  /** Ctrl-C (with `echo`, delivered twice as through `pnpm start`), then reap: see the module comment. */
  stop(options?: { echo?: boolean }): Promise<SandboxStopReport>;
}

/** What `stop()` saw. */
export interface SandboxStopReport {
  /** How the sandbox process ended: its exit code, or the signal that had to kill it. */
  exit: number | NodeJS.Signals | null;
  /** Milliseconds from SIGINT to the sandbox process's exit. */
  exitAfterMs: number;
  /** Processes of this sandbox still running after it exited (`pid command`), now killed. */
  leftovers: string[];
}

/** The view's JSON API (`/web/api/...`), typed only as far as the tests read it. */
export interface ViewMessage {
  chatId: number;
  messageId: number;
  from: 'bot' | 'user';
  kind: string;
  text: string;
  html: string;
  history: { text: string }[];
  pinned: boolean;
  deleted: boolean;
  file?: { fileName?: string; size: number };
}

export interface ViewState {
  banner: string | null;
  chats: { chat: { id: number; pinned: number[] }; messages: ViewMessage[] }[];
}

const EXIT_GRACE_MS = 20_000;

/** How to start the sandbox command. */
export interface SandboxProcessOptions {
  /** How long to wait for the URL. Default 30 s. */
  timeoutMs?: number;
  /** Run on this directory (an earlier run's) and leave it in place at `stop()`; default a fresh one, removed. */
  dir?: string;
  /** Extra environment for the sandbox command. */
  env?: NodeJS.ProcessEnv;
  /** The umask the sandbox runs with (through a shell: Node cannot set a child's umask). */
  umask?: number;
}

/** Starts the sandbox command; resolves when it has printed its URL. */
export async function startSandboxProcess(options: SandboxProcessOptions = {}): Promise<SandboxProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (npx tsc -b)`);
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'sy-sandbox-'));
  const spawnedAt = performance.now();
  // Its own process group, so that a sandbox that does not stop can be killed with its services.
  // With `umask`, through a shell that sets it first (Node cannot set a child's umask).
  const argv =
    options.umask === undefined
      ? [process.execPath, MAIN, 'sandbox']
      : [
          '/bin/sh',
          '-c',
          `umask ${options.umask.toString(8).padStart(4, '0')}; exec "$0" "$@"`,
          process.execPath,
          MAIN,
          'sandbox',
        ];
  const child = spawn(argv[0] ?? '', argv.slice(1), {
    cwd: dir,
    detached: true,
    env: {
      ...process.env,
      ...options.env,
      SWITCHYARD_SCRIPTED: '1',
      SWITCHYARD_SANDBOX_PORT: '0',
      SWITCHYARD_SANDBOX_DIR: dir,
      SWITCHYARD_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error('the sandbox printed no URL')),
      options.timeoutMs ?? 30_000,
    );
    const look = () => {
      const match = /Open (http:\/\/127\.0\.0\.1:\d+\/\?k=[A-Za-z0-9_-]+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        child.stderr?.off('data', look);
        resolve(match[1]);
      }
    };
    const fail = (err: Error) => {
      clearTimeout(timer);
      reap(child, dir);
      reject(new Error(`${err.message}:\n${output}`));
    };
    child.stderr?.on('data', look);
    exited.then((code) => fail(new Error(`the sandbox exited (${code})`)));
  });
  const urlAfterMs = performance.now() - spawnedAt;

  return {
    url,
    dir,
    pid: child.pid ?? -1,
    urlAfterMs,
    spawnedAt,
    output: () => output,
    botToken: () => {
      const config = readFileSync(path.join(dir, 'switchyard.yaml'), 'utf8');
      const token = /^\s+token: "([^"]+)"$/m.exec(config)?.[1];
      if (!token)
        throw new Error(`no token in the sandbox's ${path.join(dir, 'switchyard.yaml')}:\n${config}`);
      return token;
    },
    async stop(stopOptions = {}) {
      const t0 = performance.now();
      let exit: number | NodeJS.Signals | null = child.exitCode ?? child.signalCode;
      if (exit === null) {
        child.kill('SIGINT');
        // What `pnpm start` delivers: the terminal's Ctrl-C, then the runner's forwarded copy.
        if (stopOptions.echo) setTimeout(() => child.kill('SIGINT'), 50);
        exit = await Promise.race([exited, delay(EXIT_GRACE_MS).then(() => null)]);
        if (exit === null) {
          killGroup(child);
          exit = await exited;
        }
      }
      const exitAfterMs = performance.now() - t0;
      // A process that is still exiting (its cmdline already empty) is given a moment.
      for (let i = 0; i < 30 && processesOf(dir).length > 0; i++) await delay(100);
      const leftovers = reap(child, dir);
      if (!options.dir && !process.env.SWITCHYARD_KEEP_E2E) rmSync(dir, { recursive: true, force: true });
      return { exit, exitAfterMs, leftovers };
    },
  };
}

/** Kills the sandbox's process group and every process working in or naming its directory. */
function reap(child: ChildProcess, dir: string): string[] {
  killGroup(child);
  return killAll(processesOf(dir)).map((p) => `${p.pid} ${p.command.slice(0, 160)}`);
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is empty
  }
}

/** A client for the web view's HTTP API, as the page uses it; `url` is the printed one, with its key. */
export function viewApi(url: string) {
  const { origin, searchParams } = new URL(url);
  const key = searchParams.get('k') ?? '';
  return {
    async state(): Promise<ViewState> {
      const res = await fetch(`${origin}/web/api/state`, { headers: { 'x-sandbox-view': key } });
      if (!res.ok) throw new Error(`GET state: ${res.status}`);
      return (await res.json()) as ViewState;
    },
    async send(chatId: number, text: string): Promise<ViewMessage> {
      const res = await fetch(`${origin}/web/api/send`, {
        method: 'POST',
        headers: { 'x-sandbox-view': key, 'content-type': 'application/json' },
        body: JSON.stringify({ chatId, text }),
      });
      if (!res.ok) throw new Error(`POST send: ${res.status} ${await res.text()}`);
      return (await res.json()) as ViewMessage;
    },
  };
}

/** Polls `probe` until it returns a value; throws after `timeoutMs` with `what` in the message. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(100);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sends `text` in the sandbox's chat and resolves with the bot's finished answer to it. */
export async function chatWith(running: SandboxProcess, text: string, timeoutMs = 60_000): Promise<string> {
  const api = viewApi(running.url);
  const chatId = (await api.state()).chats[0]?.chat.id;
  if (chatId === undefined) throw new Error('the sandbox shows no chat');
  const sent = await api.send(chatId, text);
  return until(
    `an answer to "${text}"`,
    async () =>
      (await api.state()).chats
        .find((c) => c.chat.id === chatId)
        ?.messages.find(
          (m) =>
            m.from === 'bot' &&
            m.messageId > sent.messageId &&
            m.text.includes(text) &&
            m.html.includes('<i>'),
        )?.text,
    timeoutMs,
  );
}
