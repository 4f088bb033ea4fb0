/**
 * `switchyard sandbox` (and `up` with no bot token): the whole system on one machine with no Telegram
 * account. The local Telegram server runs in this process and serves the web chat view; the gateway and
 * the bridge run as child processes exactly as in production, against it.
 *
 * The agent uses the `claude` that is installed and logged in (or `ANTHROPIC_API_KEY`), and says that this
 * is the real model, billed to that account. When there is none, or `SWITCHYARD_SCRIPTED=1`, it uses the
 * built-in scripted model instead and says so, here and in the chat view.
 *
 * Every run starts a fresh chat: the stand-in Telegram keeps its chats in memory and numbers updates and
 * messages from 1, so the gateway's and bridge's state of an earlier run (which remembers the ids it has
 * seen and drops them as duplicates) is removed at start, after the earlier run's Claude process, if one
 * survived, has been stopped. The working directory (`work/`) is kept.
 *
 * Voice notes (an audio file sent in the chat view) are transcribed by the sandbox's stand-in
 * transcriber, which runs in this process too, unless `SWITCHYARD_SANDBOX_VOICE` holds a real `voice:`
 * block (as YAML flow, e.g. `{ url: "http://127.0.0.1:8080/v1", model: base }`).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveBinary, stopRecordedClaude } from '@switchyard/agent-bridge';
import { describeError, lockStateDir, stateLockHolder } from '@switchyard/protocol';
import {
  createScriptedModel,
  createTelegramServer,
  createTranscriptionServer,
  SCRIPTED_DEMOS,
  type ScriptedModel,
  scriptedClaudeEnv,
} from '@switchyard/sandbox';
import { claudeLogin, describeMissingLogin } from './claude-login.js';
import { loadConfig } from './config.js';
import { createLogger } from './log.js';
import { SIMULATED_MODEL_ENV, superviseAgent } from './services.js';
import { untilStopSignal } from './signals.js';
import { REFUSED_EXIT_STATUS, refusalText } from './supervisor.js';

/** The sample picture in the sandbox's working directory (96×96: a track under a sun), for the default script. */
const SAMPLE_PICTURE = 'switchyard.png';
const SAMPLE_PNG = [
  'iVBORw0KGgoAAAANSUhEUgAAAGAAAABgCAIAAABt+uBvAAAA5klEQVR42u3ZsQ2DMBBA0duJKuukpEidISiYI7swCdkhaZEA',
  'F4ZDSvysXyGqJ4TxEd34VqFAAAgQIECAAAECJECAAAEClN5n6gFtoOzVOlCB5hSmaEHniFE0olNtBOhPgSp06owAAQIE6DSd',
  'CiNPECBAgAD5kgbkNG8eZKJoJg3IXw1AgAABAiRAgAABAgQIECABAgQIECBAvww03G/Lnq/HupbvAQQIUC7QbBUXIECAcoG8',
  'pO1igAABAgQIECBAgAABMg9ymgcEyDzIS9ouBgjQVUCbVwUIECBAgAABAgQIASBAmX0BKlHAnzjcaJAAAAAASUVORK5CYII=',
].join('');

/** How `runSandbox` was asked for, and the process context it reads. */
export interface SandboxOptions {
  mainPath: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const DEFAULT_PORT = 8780;

/** Runs until SIGINT/SIGTERM; returns the exit code. */
export async function runSandbox(options: SandboxOptions): Promise<number> {
  const env = options.env ?? process.env;
  const base = path.resolve(
    options.cwd ?? process.cwd(),
    env.SWITCHYARD_SANDBOX_DIR ?? '.switchyard/sandbox',
  );
  const say = (line: string) => process.stderr.write(`${line}\n`);
  if (process.platform !== 'linux') {
    say(`switchyard: Switchyard runs on Linux only (it uses /proc and FIFOs); this is ${process.platform}.`);
    say('            On macOS, run it in a Linux VM or container (see "Platforms" in README.md).');
    return 1;
  }
  // Before anything else: a second sandbox on this directory would remove the first one's state.
  const taken = lockStateDir(base, 'sandbox');
  if (!taken.ok) {
    say(`switchyard: ${taken.message}`);
    say('            For a second sandbox beside it, set SWITCHYARD_SANDBOX_DIR to another directory.');
    return 1;
  }
  try {
    return await runLocked(base, env, options, say);
  } finally {
    taken.lock.release();
  }
}

async function runLocked(
  base: string,
  env: NodeJS.ProcessEnv,
  options: SandboxOptions,
  say: (line: string) => void,
): Promise<number> {
  // The sandbox talks to a person at a terminal: plain sentences, and JSON log lines only for problems.
  const quiet = { ...env, SWITCHYARD_LOG_LEVEL: env.SWITCHYARD_LOG_LEVEL ?? 'warn' };
  const logger = createLogger({ agent: 'sandbox', service: 'sandbox' }, quiet);
  mkdirSync(path.join(base, 'work'), { recursive: true });
  // A picture the scripted model's "send me a picture" sends with the file tools; written on every start,
  // so an earlier run's (once a 1×1 image, an empty-looking bubble) is replaced.
  writeFileSync(path.join(base, 'work', SAMPLE_PICTURE), Buffer.from(SAMPLE_PNG, 'base64'));

  const claude = chooseClaude(env);
  let model: ScriptedModel | undefined;
  const claudeEnv: Record<string, string> = {};
  if (claude.kind === 'real') {
    say(`switchyard: using your logged-in Claude Code (${claude.bin}): the REAL model, billed to your`);
    say('            account or plan, so every message costs real money or quota.');
    say('            For the free built-in scripted model instead: SWITCHYARD_SCRIPTED=1.');
  } else {
    say(`switchyard: ${claude.reason}`);
    say('switchyard: using the built-in SCRIPTED model: answers are canned, to show the system working.');
    say('            For real answers: install Claude Code and log in (`claude`), or set ANTHROPIC_API_KEY.');
    model = createScriptedModel({ chunkDelayMs: 40 });
    const { baseUrl } = await model.start();
    Object.assign(claudeEnv, scriptedClaudeEnv({ baseUrl, configDir: path.join(base, 'claude-config') }));
  }

  // No token of our own: the stand-in's is new on every run (only the gateway started here gets it, in
  // the config written below), and its routes answer no page but its own (issue 27).
  const telegram = createTelegramServer({
    bot: { firstName: 'Switchyard sandbox', username: 'switchyard_sandbox_bot' },
    port: Number(env.SWITCHYARD_SANDBOX_PORT ?? DEFAULT_PORT),
    banner:
      claude.kind === 'scripted'
        ? 'Scripted model: the answers are canned, not from Claude.'
        : 'Real Claude model: every message is billed to your Claude account.',
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
  await freshState(path.join(base, 'state'), logger);
  const voice = await sandboxVoice(env.SWITCHYARD_SANDBOX_VOICE, say);
  const userId = telegram.defaultUser.id;
  if (claude.kind === 'scripted') await postDemos(address.apiRoot, telegram.token, telegram.privateChat().id);
  const configFile = path.join(base, 'switchyard.yaml');
  // Created anew, so that its mode holds for a file an earlier run left.
  rmSync(configFile, { force: true });
  writeFileSync(
    configFile,
    [
      '# Written by `switchyard sandbox` on every start; edit your own switchyard.yaml instead.',
      'agents:',
      '  - name: sandbox',
      `    token: "${telegram.token}"`,
      `    apiRoot: ${JSON.stringify(address.apiRoot)}`,
      `    allow: [${userId}]`,
      `    workDir: ${JSON.stringify(path.join(base, 'work'))}`,
      `    stateDir: ${JSON.stringify(path.join(base, 'state'))}`,
      `    runtimeDir: ${JSON.stringify(shortRuntimeDir(base))}`,
      '    card: { showDelayMs: 3000 }',
      '    claude:',
      `      bin: ${JSON.stringify(claude.bin)}`,
      `      env: ${JSON.stringify(claudeEnv)}`,
      `    voice: ${voice.block}`,
      '',
    ].join('\n'),
    // It holds this run's bot token: the developer's to read, no other user's.
    { mode: 0o600 },
  );

  const agent = loadConfig(configFile, { env, cwd: base }).agents[0];
  if (!agent) throw new Error(`${configFile} names no agent`);
  // The scripted model's costs were never spent: the gateway says so on cards and in /status.
  const childEnv = claude.kind === 'scripted' ? { ...quiet, [SIMULATED_MODEL_ENV]: '1' } : quiet;
  const supervisor = superviseAgent({ mainPath: options.mainPath, configFile, agent, logger, env: childEnv });
  supervisor.start();
  const url = address.webUrl ?? `${address.apiRoot}/`;
  say('');
  say(`switchyard: the sandbox is running. Open ${url} to chat with the agent.`);
  say(`            (working directory ${path.join(base, 'work')}; each run starts a fresh chat;`);
  say('            Ctrl-C stops everything)');
  say('');

  const stopAll = async () => {
    await supervisor.stop();
    await telegram.stop();
    await model?.stop();
    await voice.stop();
  };
  const refused = await Promise.race([
    untilStopSignal(stopAll, { onSignal: () => say('switchyard: stopping the sandbox…') }).then(
      () => undefined,
    ),
    supervisor.refused,
  ]);
  if (!refused) return 0;
  // A service refused the sandbox's config (a voice block of the operator's, say): restarting cannot help.
  await stopAll();
  console.error(refusalText(agent.name, refused));
  return REFUSED_EXIT_STATUS;
}

/**
 * The `voice:` block of the sandbox's config: the operator's own (`SWITCHYARD_SANDBOX_VOICE`), or the
 * stand-in transcriber started here, which hears a `switchyard-says:` marker in a test file and names
 * the size of any other recording.
 */
async function sandboxVoice(
  own: string | undefined,
  say: (line: string) => void,
): Promise<{ block: string; stop(): Promise<void> }> {
  if (own !== undefined && own.trim() !== '') {
    say('switchyard: voice notes are transcribed by the transcriber in SWITCHYARD_SANDBOX_VOICE.');
    return { block: own.trim(), stop: async () => {} };
  }
  const standIn = createTranscriptionServer();
  const { url } = await standIn.start();
  return {
    block: `{ url: ${JSON.stringify(url)}, model: sandbox-transcriber }`,
    stop: () => standIn.stop(),
  };
}

/**
 * The scripted model's demos as the chat's first message, sent as the bot through the Bot API, so that a
 * newcomer sees what to try before typing anything.
 */
async function postDemos(apiRoot: string, token: string, chatId: number): Promise<void> {
  const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const code = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');
  const text = [
    '<b>Scripted model</b>: the answers are canned, no real Claude is answering. Say one of these:',
    '',
    ...SCRIPTED_DEMOS.map((d) => `• <code>${escapeHtml(d.say)}</code> — ${code(d.shows)}`),
    '',
    'Anything else is echoed back; <code>help</code> shows this list again.',
  ].join('\n');
  const res = await fetch(`${apiRoot}/bot${token}/sendMessage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: chatId, text, parse_mode: 'HTML' }),
  });
  if (!res.ok) throw new Error(`the sandbox could not post its welcome: ${res.status} ${await res.text()}`);
}

/**
 * Removes an earlier run's service state so that ids numbered afresh by the stand-in Telegram are not
 * taken for duplicates. Its Claude process, should one have outlived that run (a `kill -9`), is stopped
 * first: deleting its record would otherwise leave it running unseen.
 */
async function freshState(stateDir: string, logger: ReturnType<typeof createLogger>): Promise<void> {
  if (!existsSync(stateDir)) return;
  // A service of an earlier run that outlived it (its sandbox was killed) still uses this state.
  for (const service of ['gateway', 'bridge']) {
    const holder = stateLockHolder(path.join(stateDir, service));
    if (holder) {
      throw new Error(
        `the ${service} of an earlier sandbox (pid ${holder.pid}) still runs on ${stateDir}: stop it (kill ${holder.pid}), then start again`,
      );
    }
  }
  const outcome = await stopRecordedClaude({ stateDir: path.join(stateDir, 'bridge'), logger });
  if (outcome === 'unknown') {
    throw new Error(
      `cannot tell whether the Claude process recorded in ${stateDir} still runs; stop it, then remove that directory`,
    );
  }
  rmSync(stateDir, { recursive: true, force: true });
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
  const login = claudeLogin(env);
  if (login.kind === 'none') {
    return {
      kind: 'scripted',
      bin: pinned,
      reason: `\`claude\` is installed but not logged in (${describeMissingLogin(login)}, no ANTHROPIC_API_KEY).`,
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

/**
 * The socket must fit in 107 bytes; a deep checkout falls back to a directory under /tmp, one per sandbox
 * directory (so two sandboxes in different directories never share a socket).
 */
function shortRuntimeDir(base: string): string {
  const preferred = path.join(base, 'run');
  if (Buffer.byteLength(path.join(preferred, 'bridge.sock')) <= 100) return preferred;
  const tag = createHash('sha256').update(base).digest('hex').slice(0, 12);
  return path.join('/tmp', `switchyard-${process.getuid?.() ?? 'user'}-sandbox-${tag}`);
}
