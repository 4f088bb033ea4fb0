/**
 * End-to-end harness: the gateway and the bridge as real processes (the built `switchyard` command),
 * the local Telegram server and the scripted Anthropic API in this process, and the real `claude` CLI.
 * A test can kill either service at any moment and start it again, and read the chat as the user sees it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { conversationDir } from '@switchyard/agent-bridge';
import { conversationKey } from '@switchyard/protocol';
import {
  createScriptedModel,
  createTelegramServer,
  type Rule,
  type ScriptedModel,
  scriptedClaudeEnv,
  type TelegramServer,
} from '@switchyard/sandbox';
import { afterEach } from 'vitest';
import { killAll, processesOf } from './processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MAIN = path.join(root, 'packages/cli/dist/main.js');
export const CLAUDE = path.join(root, 'node_modules/.bin/claude');
const TOKEN = '4242:e2e-token-not-a-secret-000000000';

/** `link`: the ssh link to a bridge on another host (`remote` below), run on the gateway's side. */
export type Service = 'gateway' | 'bridge' | 'link';

export interface SystemOptions {
  rules: readonly Rule[];
  /** Characters per streamed delta and pause between them. */
  chunkSize?: number;
  chunkDelayMs?: number;
  card?: { showDelayMs?: number };
  /** Keep service logs on the test's stdout (default: only on failure, see `logs`). */
  echoLogs?: boolean;
  /** How the CLI is logged in (default `api-key`; `subscription`: `CLAUDE_CODE_OAUTH_TOKEN`). */
  login?: 'api-key' | 'subscription';
  /** More of the agent's config (conversations, chats, maxLiveSessions…), over the defaults here. */
  agent?: (telegram: TelegramServer) => Record<string, unknown>;
  /**
   * Run the bridge as on another host, through a real sshd: the gateway (and the `link`) read the
   * config with a `bridge:` block, the bridge a worker config of its own with separate state, runtime
   * and exchange directories, so the two sides share no disk the protocol relies on.
   */
  remote?: { port: number; user: string; identityFile: string; knownHosts: string };
}

export interface System {
  telegram: TelegramServer;
  model: ScriptedModel;
  /** The private chat of the allowed user. */
  chatId: number;
  dir: string;
  /** The generated config file (for running other `switchyard` commands against this system). */
  configPath: string;
  /** The worker's config when the bridge is remote (else the same as `configPath`). */
  workerConfigPath: string;
  /** The bot token the services use (to prove it never reaches a log). */
  token: string;
  /** The pid of the Claude process recorded for a conversation (chat, forum topic), if any. */
  claudePid(chatId: number, threadId?: number): number | undefined;
  start(service: Service): void;
  /** Sends a signal and waits until the process is gone. */
  kill(service: Service, signal?: NodeJS.Signals): Promise<void>;
  pid(service: Service): number | undefined;
  /**
   * `switchyard stop-claude` on the worker's config, as `systemctl stop` runs it after the bridge: ends
   * the agent's Claude processes for good. Resolves with its exit status and stderr.
   */
  stopClaude(): Promise<{ status: number | null; stderr: string }>;
  /** Everything the services wrote, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

export async function startSystem(options: SystemOptions): Promise<System> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (pnpm build); pnpm test does it`);
  const dir = mkdtempSync(path.join(tmpdir(), 'sy-e2e-'));
  const work = path.join(dir, 'work');
  mkdirSync(work);
  const model = createScriptedModel({
    script: options.rules,
    chunkSize: options.chunkSize ?? 8,
    chunkDelayMs: options.chunkDelayMs ?? 20,
  });
  const { baseUrl } = await model.start();
  const telegram = createTelegramServer({ token: TOKEN });
  const { apiRoot } = await telegram.start();
  const chatId = telegram.privateChat().id;
  const config = path.join(dir, 'switchyard.yaml');
  const remote = options.remote;
  const agentEntry = (root: string): Record<string, unknown> => ({
    name: 'e2e',
    apiRoot,
    allow: [telegram.defaultUser.id],
    workDir: work,
    stateDir: path.join(root, 'state'),
    runtimeDir: path.join(root, 'run'),
    card: { showDelayMs: options.card?.showDelayMs ?? 60_000 },
    claude: {
      bin: CLAUDE,
      env: scriptedClaudeEnv({
        baseUrl,
        configDir: path.join(dir, 'claude-config'),
        ...(options.login ? { login: options.login } : {}),
      }),
    },
    ...(remote
      ? {
          bridge: {
            host: '127.0.0.1',
            socket: path.join(dir, 'worker', 'state', 'bridge', 'link.sock'),
            ssh: {
              user: remote.user,
              port: remote.port,
              identityFile: remote.identityFile,
              knownHosts: remote.knownHosts,
              aliveIntervalSeconds: 1,
            },
          },
        }
      : {}),
    ...options.agent?.(telegram),
  });
  let workerConfig = config;
  if (remote) {
    // No secret of the gateway's in a config the worker holds: the token is a file of the gateway's side.
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    writeFileSync(config, JSON.stringify({ agents: [{ ...agentEntry(dir), token: { file: tokenFile } }] }));
    mkdirSync(path.join(dir, 'worker'));
    workerConfig = path.join(dir, 'worker', 'switchyard.yaml');
    writeFileSync(workerConfig, JSON.stringify({ agents: [agentEntry(path.join(dir, 'worker'))] }));
  } else {
    writeFileSync(config, JSON.stringify({ agents: [{ ...agentEntry(dir), token: TOKEN }] }));
  }
  const children = new Map<Service, ChildProcess>();
  let output = '';
  const start = (service: Service): void => {
    const running = children.get(service);
    if (running && running.exitCode === null && running.signalCode === null)
      throw new Error(`${service} is already running`);
    const file = service === 'bridge' ? workerConfig : config;
    const child = spawn(process.execPath, [MAIN, '--config', file, service, 'e2e'], {
      // `info`: the services log nothing below it today, and a test reads the lines it needs at `info`.
      // `SWITCHYARD_E2E_LOG_LEVEL=debug` to see more when chasing a failure.
      env: { ...process.env, SWITCHYARD_LOG_LEVEL: process.env.SWITCHYARD_E2E_LOG_LEVEL ?? 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (options.echoLogs) process.stdout.write(chunk);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('exit', (code, signal) => {
      output += `${JSON.stringify({ harness: 'exit', service, pid: child.pid, code, signal })}\n`;
    });
    children.set(service, child);
  };
  const kill = async (service: Service, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const child = children.get(service);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await gone;
  };
  const stopClaude = (): Promise<{ status: number | null; stderr: string }> =>
    new Promise((resolve) => {
      const stopper = spawn(process.execPath, [MAIN, '--config', workerConfig, 'stop-claude', 'e2e'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      stopper.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      stopper.once('exit', (status) => resolve({ status, stderr }));
    });
  return {
    telegram,
    model,
    chatId,
    dir,
    configPath: config,
    workerConfigPath: workerConfig,
    token: TOKEN,
    claudePid(chatId, threadId) {
      // The conversation's claude reads its FIFO on stdin: the one process whose fd 0 is that file.
      const fifo = `/${conversationDir(conversationKey(threadId === undefined ? { chatId } : { chatId, threadId }))}/stdin.fifo`;
      return processesOf(dir).find((p) => {
        try {
          return readlinkSync(`/proc/${p.pid}/fd/0`).endsWith(fifo);
        } catch {
          return false;
        }
      })?.pid;
    },
    start,
    kill,
    pid: (service) => children.get(service)?.pid,
    stopClaude,
    logs: () => output,
    async stop() {
      await kill('bridge', 'SIGTERM');
      await kill('link', 'SIGTERM');
      await kill('gateway', 'SIGTERM');
      // The bridge leaves claude running on SIGTERM by design; end it for real.
      await stopClaude();
      await telegram.stop();
      await model.stop();
      // Safety net: no process this test started may outlive it, whatever the code under test did.
      const leaked = killAll(processesOf(dir));
      if (leaked.length > 0)
        console.warn(`e2e: killed processes left running in ${dir}: ${leaked.map((p) => p.pid).join(', ')}`);
      if (!process.env.SWITCHYARD_KEEP_E2E) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Registers an `afterEach` that stops the system a test started (printing the services' logs first
 * when the test failed) and returns the function that starts it.
 */
export function systemPerTest(): (options: SystemOptions) => Promise<System> {
  let current: System | undefined;
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && current) keepLogs(current, context.task.name);
    await current?.stop();
    current = undefined;
  });
  return async (options) => {
    current = await startSystem(options);
    return current;
  };
}

/**
 * Writes a failed test's service logs to a file of their own (whole: a failure's cause is rarely in the
 * last screen of them) and prints where, with their last lines, instead of pouring them into the report.
 */
export function keepLogs(system: System, testName: string): string {
  const file = path.join(
    tmpdir(),
    `switchyard-e2e-${testName.replace(/[^\w.-]+/g, '-').slice(0, 80)}-${process.pid}.log`,
  );
  writeFileSync(file, system.logs());
  const tail = system.logs().split('\n').slice(-40).join('\n');
  console.log(`the services' logs of "${testName}" are in ${file}; the last lines:\n${tail}`);
  return file;
}

/** The bot's visible messages in a chat, oldest first. */
export function botMessages(telegram: TelegramServer, chatId: number) {
  return telegram.messages(chatId).filter((m) => m.from === 'bot' && m.kind !== 'service');
}

/**
 * Waits until every user message in `chats` shows its final state (👌), then until nothing changes for
 * `quietMs` ({@link settled}). Quiet alone is not settled: a Claude CLI starting under load keeps its chat
 * silent for seconds before the first answer, and a reaction paced behind a 429's penalty comes seconds
 * after the answer it follows (a full run once judged a chat 4 s quiet there, with its opener still ✍).
 * After `timeoutMs` without them it goes on, and the test's assertions say what is missing.
 */
export async function finalStates(
  telegram: TelegramServer,
  chats: readonly number[],
  quietMs: number,
  timeoutMs = 60_000,
): Promise<void> {
  const read = () =>
    chats.every((c) =>
      telegram
        .messages(c)
        .filter((m) => m.from === 'user')
        .every((m) => m.reactions.length === 1 && m.reactions[0] === '👌'),
    );
  const until = Date.now() + timeoutMs;
  while (!read() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
  await settled(telegram, chats, quietMs);
}

/**
 * Waits until nothing the chats show (messages, their texts and versions, reactions) changed for
 * `quietMs`: a burst has settled when every message's final state is on screen and stays there.
 */
export async function settled(
  telegram: TelegramServer,
  chats: readonly number[],
  quietMs: number,
): Promise<void> {
  const snapshot = () =>
    JSON.stringify(
      chats.map((c) => telegram.messages(c).map((m) => [m.messageId, m.text, m.history.length, m.reactions])),
    );
  let last = snapshot();
  let since = Date.now();
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = snapshot();
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return;
  }
  throw new Error(`the chats never settled: something changed at least every ${quietMs} ms for 120 s`);
}
