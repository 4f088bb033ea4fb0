/**
 * `switchyard sandbox` (and `up` with no bot token): the whole system on one machine with no Telegram
 * account. The local Telegram server runs in this process and serves the web chat view; the gateway and
 * the bridge run as child processes exactly as in production, against it.
 *
 * The agent uses the `claude` that is installed and logged in (or `ANTHROPIC_API_KEY`). When there is
 * none, or `SWITCHYARD_SCRIPTED=1`, it uses the built-in scripted model instead and says so, here and
 * in the chat view.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveBinary } from '@switchyard/agent-bridge';
import { describeError } from '@switchyard/protocol';
import {
  createScriptedModel,
  createTelegramServer,
  type ScriptedModel,
  scriptedClaudeEnv,
} from '@switchyard/sandbox';
import { loadConfig } from './config.js';
import { createLogger } from './log.js';
import { superviseAgent } from './services.js';

/** The sample picture in the sandbox's working directory (a 1×1 PNG), for the default script. */
const SAMPLE_PICTURE = 'switchyard.png';
const SAMPLE_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** How `runSandbox` was asked for, and the process context it reads. */
export interface SandboxOptions {
  mainPath: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const SANDBOX_TOKEN = '1000001:sandbox-token-not-a-secret-0000';
const DEFAULT_PORT = 8780;

/** Runs until SIGINT/SIGTERM; returns the exit code. */
export async function runSandbox(options: SandboxOptions): Promise<number> {
  const env = options.env ?? process.env;
  const base = path.resolve(
    options.cwd ?? process.cwd(),
    env.SWITCHYARD_SANDBOX_DIR ?? '.switchyard/sandbox',
  );
  // The sandbox talks to a person at a terminal: plain sentences, and JSON log lines only for problems.
  const quiet = { ...env, SWITCHYARD_LOG_LEVEL: env.SWITCHYARD_LOG_LEVEL ?? 'warn' };
  const logger = createLogger({ agent: 'sandbox', service: 'sandbox' }, quiet);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  mkdirSync(path.join(base, 'work'), { recursive: true });
  // A picture the scripted model's "send me a picture" sends with the file tools.
  const picture = path.join(base, 'work', SAMPLE_PICTURE);
  if (!existsSync(picture)) writeFileSync(picture, Buffer.from(SAMPLE_PNG, 'base64'));

  const claude = chooseClaude(env);
  let model: ScriptedModel | undefined;
  const claudeEnv: Record<string, string> = {};
  if (claude.kind === 'scripted') {
    say(`switchyard: ${claude.reason}`);
    say('switchyard: using the built-in SCRIPTED model: answers are canned, to show the system working.');
    say('            For real answers: install Claude Code and log in (`claude`), or set ANTHROPIC_API_KEY.');
    model = createScriptedModel({ chunkDelayMs: 40 });
    const { baseUrl } = await model.start();
    Object.assign(claudeEnv, scriptedClaudeEnv({ baseUrl, configDir: path.join(base, 'claude-config') }));
  }

  const telegram = createTelegramServer({
    token: SANDBOX_TOKEN,
    bot: { firstName: 'Switchyard sandbox', username: 'switchyard_sandbox_bot' },
    port: Number(env.SWITCHYARD_SANDBOX_PORT ?? DEFAULT_PORT),
    ...(claude.kind === 'scripted'
      ? { banner: 'Scripted model: the answers are canned, not from Claude.' }
      : {}),
  });
  let address: { apiRoot: string; webUrl: string | undefined };
  try {
    address = await telegram.start();
  } catch (err) {
    say(
      `switchyard: cannot listen on 127.0.0.1:${env.SWITCHYARD_SANDBOX_PORT ?? DEFAULT_PORT} (${describeError(err)}).`,
    );
    say('            Set SWITCHYARD_SANDBOX_PORT to a free port (0 picks one).');
    await model?.stop();
    return 1;
  }
  const userId = telegram.defaultUser.id;
  const configFile = path.join(base, 'switchyard.yaml');
  writeFileSync(
    configFile,
    [
      '# Written by `switchyard sandbox` on every start; edit your own switchyard.yaml instead.',
      'agents:',
      '  - name: sandbox',
      `    token: "${SANDBOX_TOKEN}"`,
      `    apiRoot: ${JSON.stringify(address.apiRoot)}`,
      `    allow: [${userId}]`,
      `    workDir: ${JSON.stringify(path.join(base, 'work'))}`,
      `    stateDir: ${JSON.stringify(path.join(base, 'state'))}`,
      `    runtimeDir: ${JSON.stringify(shortRuntimeDir(base))}`,
      '    card: { showDelayMs: 3000 }',
      '    claude:',
      `      bin: ${JSON.stringify(claude.bin)}`,
      `      env: ${JSON.stringify(claudeEnv)}`,
      '',
    ].join('\n'),
  );

  const agent = loadConfig(configFile, { env, cwd: base }).agents[0];
  if (!agent) throw new Error(`${configFile} names no agent`);
  const supervisor = superviseAgent({ mainPath: options.mainPath, configFile, agent, logger, env: quiet });
  supervisor.start();
  const url = address.webUrl ?? `${address.apiRoot}/`;
  say('');
  say(`switchyard: the sandbox is running. Open ${url} to chat with the agent.`);
  say(`            (working directory ${path.join(base, 'work')}; Ctrl-C stops everything)`);
  say('');

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  say('switchyard: stopping the sandbox…');
  await supervisor.stop();
  await telegram.stop();
  await model?.stop();
  return 0;
}

type ClaudeChoice = { kind: 'real'; bin: string } | { kind: 'scripted'; bin: string; reason: string };

/** The installed, logged-in `claude` when there is one; else the pinned CLI against the scripted model. */
export function chooseClaude(env: NodeJS.ProcessEnv): ClaudeChoice {
  const pinned = pinnedClaude();
  if (env.SWITCHYARD_SCRIPTED === '1') {
    return { kind: 'scripted', bin: pinned, reason: 'SWITCHYARD_SCRIPTED=1 is set.' };
  }
  const installed = installedClaude(env) ?? (existsSync(pinned) ? pinned : undefined);
  if (!installed) return { kind: 'scripted', bin: pinned, reason: 'no `claude` command was found.' };
  const configDir = env.CLAUDE_CONFIG_DIR ?? path.join(homedir(), '.claude');
  const loggedIn =
    Boolean(env.ANTHROPIC_API_KEY) ||
    Boolean(env.CLAUDE_CODE_OAUTH_TOKEN) ||
    existsSync(path.join(configDir, '.credentials.json'));
  if (!loggedIn) {
    return {
      kind: 'scripted',
      bin: pinned,
      reason: `\`claude\` is installed but not logged in (no ${path.join(configDir, '.credentials.json')}, no ANTHROPIC_API_KEY).`,
    };
  }
  return { kind: 'real', bin: installed };
}

function pinnedClaude(): string {
  // packages/cli/dist/sandbox.js → the workspace root's node_modules/.bin/claude
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  return path.join(root, 'node_modules', '.bin', 'claude');
}

/**
 * The `claude` a person installed: the bridge's own PATH lookup, minus `node_modules/.bin` directories
 * (pnpm puts the workspace's pinned test binary there, which is not a logged-in install).
 */
function installedClaude(env: NodeJS.ProcessEnv): string | undefined {
  const PATH = (env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !dir.includes(`${path.sep}node_modules${path.sep}`))
    .join(path.delimiter);
  try {
    return resolveBinary('claude', { PATH });
  } catch {
    return undefined;
  }
}

/** The socket must fit in 107 bytes; a deep checkout falls back to a directory under /tmp. */
function shortRuntimeDir(base: string): string {
  const preferred = path.join(base, 'run');
  if (Buffer.byteLength(path.join(preferred, 'bridge.sock')) <= 100) return preferred;
  const dir = path.join('/tmp', `switchyard-${process.getuid?.() ?? 'user'}-sandbox`);
  return dir;
}
