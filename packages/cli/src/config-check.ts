/**
 * What `switchyard config check` (and `doctor`) verify beyond the file's shape: that what each agent's
 * config points at is there. The token source exists and holds a bot token, the working directory
 * exists and is writable, the state directory is (or can be made) writable, and the `claude` binary is
 * found, as are a voice transcriber's key or program. Each finding names the config path it is about;
 * none ever carries the token or the key.
 *
 * The checks only read: nothing is created, so a check on a host before install changes nothing.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { resolveBinary } from '@switchyard/agent-bridge';
import { MAX_SOCKET_PATH_BYTES } from '@switchyard/protocol';
import type { AgentConfig, Config, ConfigEnvironment } from './agent-config.js';
import { readToken } from './bot-token.js';
import { checkConfigFile } from './config.js';
import { ConfigError } from './config-error.js';
import type { Finding } from './finding.js';
import { describeConfig } from './masked-config.js';
import { remoteBridgeFindings } from './remote-bridge-config.js';
import { secretFindings } from './secret-exposure.js';
import { voiceOptions } from './voice-config.js';
import { webhookOptions } from './webhook-config.js';

/** Every resource check for every agent of `config`, in config order. */
export function checkConfigResources(config: Config, environment: ConfigEnvironment): Finding[] {
  return config.agents.flatMap((agent, i) => checkAgentResources(agent, i, config.file, environment));
}

/** The resource checks of one agent; `index` is its position in the file, for the paths. */
export function checkAgentResources(
  agent: AgentConfig,
  index: number,
  configFile: string,
  environment: ConfigEnvironment,
): Finding[] {
  const at = (field: string) => `agents[${index}].${field}`;
  return [
    checkToken(agent, at('token'), configFile, environment),
    checkDirectory(at('workDir'), 'working directory', agent.workDir, {
      fix: `create it and give the agent's user write access: mkdir -p ${agent.workDir}`,
    }),
    // Under the units each service writes its own subdirectory (root owns the state directory itself):
    // once the bridge's exists, that is the one the agent's user must be able to write.
    statKind(path.join(agent.stateDir, 'bridge')) === 'dir'
      ? checkDirectory(at('stateDir'), "bridge's state directory", path.join(agent.stateDir, 'bridge'), {})
      : checkDirectory(at('stateDir'), 'state directory', agent.stateDir, { mayBeCreated: true }),
    checkClaude(agent, at('claude.bin'), environment),
    ...checkVoice(agent, at('voice'), environment),
    ...checkWebhooks(agent, at('webhooks'), environment),
    ...checkSockets(agent, index),
    ...remoteBridgeFindings(agent.bridge, index),
    ...secretFindings(agent, index, environment.env),
  ];
}

/**
 * The gateway's socket path against the 107 bytes a Unix socket path may have: in a runtime directory the
 * config names it must fit (the config load refuses it otherwise); the default one moves to this user's
 * short directory when its natural path is too long. (The file tools need no socket: the bridge serves
 * them over HTTP on 127.0.0.1.)
 */
export function checkSockets(agent: AgentConfig, index: number): Finding[] {
  const findings: Finding[] = [];
  const gatewayBytes = Buffer.byteLength(agent.socketPath);
  findings.push(
    gatewayBytes > MAX_SOCKET_PATH_BYTES
      ? {
          level: 'error',
          path: `agents[${index}].runtimeDir`,
          message: `the socket path ${agent.socketPath} is ${gatewayBytes} bytes, over the ${MAX_SOCKET_PATH_BYTES}-byte limit`,
          fix: 'choose a shorter runtimeDir, or leave it out',
        }
      : {
          level: 'ok',
          path: `agents[${index}].runtimeDir`,
          message: `socket ${agent.socketPath} (${gatewayBytes} of ${MAX_SOCKET_PATH_BYTES} bytes)`,
        },
  );
  return findings;
}

function checkToken(
  agent: AgentConfig,
  where: string,
  configFile: string,
  environment: ConfigEnvironment,
): Finding {
  const source = agent.token;
  if (!source) {
    return { level: 'ok', path: where, message: 'no token: the agent runs against the local sandbox' };
  }
  if (source.kind === 'credential' && !environment.env.CREDENTIALS_DIRECTORY) {
    // Only the gateway's unit can read it (LoadCredential=); outside it, say where systemd takes it from.
    return {
      level: 'warn',
      path: where,
      message: `systemd credential ${source.name}: loaded by the gateway unit, not readable from here`,
      fix: `check that /etc/switchyard/credentials/${agent.name}.token exists (root-owned, 0600) and holds the token from @BotFather`,
    };
  }
  try {
    readToken(agent, environment, configFile);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // readToken's messages name the source, never the token; drop its own path prefix for ours.
    const message = (err.problems[0] ?? 'unreadable').replace(/^agents\([^)]*\)\.token: /, '');
    const fix =
      source.kind === 'env'
        ? `set ${source.name} in the service's environment (or use token: { file: PATH })`
        : source.kind === 'file'
          ? `put the token from @BotFather on the first line of ${source.path}, readable by the gateway's user`
          : source.kind === 'credential'
            ? `put the token in the file the gateway unit's LoadCredential=${source.name}:… names`
            : 'paste the whole token from @BotFather';
    return { level: 'error', path: where, message, fix };
  }
  const from =
    source.kind === 'inline'
      ? 'inline'
      : source.kind === 'file'
        ? `from file ${source.path}`
        : source.kind === 'credential'
          ? `from systemd credential ${source.name}`
          : `from environment variable ${source.name}`;
  return { level: 'ok', path: where, message: `a bot token is there (${from})` };
}

/**
 * A directory the agent writes: it must exist (or, with `mayBeCreated`, its nearest existing ancestor
 * must be writable, as the services create it) and be writable and searchable.
 */
function checkDirectory(
  where: string,
  what: string,
  dir: string,
  options: { mayBeCreated?: boolean; fix?: string },
): Finding {
  let existing = dir;
  for (;;) {
    const kind = statKind(existing);
    if (kind === 'dir') break;
    if (kind === 'other') {
      return {
        level: 'error',
        path: where,
        message: `${existing} is not a directory`,
        fix: 'remove it or choose another path',
      };
    }
    if (!options.mayBeCreated) {
      return {
        level: 'error',
        path: where,
        message: `the ${what} ${dir} does not exist`,
        fix: options.fix ?? `mkdir -p ${dir}`,
      };
    }
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch {
    return {
      level: 'error',
      path: where,
      message: `the ${what} ${existing === dir ? dir : `${dir} (its parent ${existing})`} is not writable by this user`,
      fix: options.fix ?? `chown it to the agent's user, or choose another path`,
    };
  }
  return {
    level: 'ok',
    path: where,
    message: existing === dir ? `${dir} is writable` : `${dir} will be created (under ${existing})`,
  };
}

function statKind(p: string): 'dir' | 'other' | 'missing' {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'other';
  } catch {
    return 'missing';
  }
}

function checkClaude(agent: AgentConfig, where: string, environment: ConfigEnvironment): Finding {
  // The bridge starts claude with its own environment plus the agent's claude.env.
  const env = { ...environment.env, ...agent.claude.env };
  try {
    return { level: 'ok', path: where, message: `claude is ${resolveBinary(agent.claude.bin, env)}` };
  } catch (err) {
    return {
      level: 'error',
      path: where,
      message: (err as Error).message,
      fix: 'npm install -g @anthropic-ai/claude-code, or set claude.bin to its absolute path',
    };
  }
}

/**
 * The transcriber of voice messages, when configured: its key readable (a credential only under the
 * gateway's unit), its program found. Nothing is sent to a server: a check only reads.
 */
function checkVoice(agent: AgentConfig, where: string, environment: ConfigEnvironment): Finding[] {
  const voice = agent.voice;
  if (voice === undefined) return [];
  if (voice.kind === 'command') {
    try {
      const program = resolveBinary(voice.command[0], environment.env);
      return [
        { level: 'ok', path: `${where}.command`, message: `voice messages are transcribed by ${program}` },
      ];
    } catch (err) {
      return [
        {
          level: 'error',
          path: `${where}.command`,
          message: (err as Error).message,
          fix: 'install the recognizer, or give its absolute path as the first item of voice.command',
        },
      ];
    }
  }
  if (voice.key?.kind === 'credential' && !environment.env.CREDENTIALS_DIRECTORY) {
    return [
      {
        level: 'warn',
        path: `${where}.key`,
        message: `systemd credential ${voice.key.name}: loaded by the gateway unit, not readable from here`,
        fix: `check that the file the gateway unit's LoadCredential=${voice.key.name}:… names holds the key`,
      },
    ];
  }
  const read = voiceOptions(voice, environment.env);
  if (!read.ok) {
    return [
      {
        level: 'error',
        path: `${where}.key`,
        message: read.problem,
        fix: 'make the key readable there, or remove key: for a server that needs none',
      },
    ];
  }
  return [
    {
      level: 'ok',
      path: where,
      message: `voice messages are transcribed by ${voice.url} (model ${voice.model})`,
    },
  ];
}

/**
 * The webhook receiver, when configured: every hook's secret readable (a credential only under the
 * gateway's unit, so a warning elsewhere), and where it listens.
 */
function checkWebhooks(agent: AgentConfig, where: string, environment: ConfigEnvironment): Finding[] {
  const webhooks = agent.webhooks;
  if (webhooks === undefined) return [];
  if (webhooks.hooks.some((h) => h.secret.kind === 'credential') && !environment.env.CREDENTIALS_DIRECTORY) {
    return [
      {
        level: 'warn',
        path: `${where}.hooks`,
        message: 'a hook secret is a systemd credential: loaded by the gateway unit, not readable from here',
        fix: "check that the gateway unit's LoadCredential= names the file that holds it",
      },
    ];
  }
  const read = webhookOptions(webhooks, environment.env);
  if (!read.ok) {
    return [{ level: 'error', path: where, message: read.problem, fix: 'make the secret readable there' }];
  }
  const { host, port } = webhooks.listen;
  return [
    {
      level: webhooks.listen.public ? 'warn' : 'ok',
      path: where,
      message: `webhooks listen on ${host}:${port} (${webhooks.hooks.map((h) => `/hooks/${h.name}`).join(', ')})`,
      ...(webhooks.listen.public
        ? { fix: 'reachable beyond this machine: prefer 127.0.0.1 behind a TLS proxy' }
        : {}),
    },
  ];
}

/** The findings as lines for a person: problems only, unless `all`. */
export function formatFindings(findings: readonly Finding[], options: { all?: boolean } = {}): string[] {
  return findings
    .filter((f) => options.all || f.level !== 'ok')
    .map(
      (f) =>
        `${f.level === 'ok' ? 'ok   ' : f.level === 'warn' ? 'warn ' : 'ERROR'} ${f.path}: ${f.message}${f.fix ? `\n      fix: ${f.fix}` : ''}`,
    );
}

/**
 * The findings with those that say the same thing of several agents (that outside systemd Claude can
 * read the token, that a systemd credential is the unit's to read) merged into one naming every path,
 * with each agent's own fix kept: a person reads the finding once.
 */
export function mergeRepeated(findings: readonly Finding[]): Finding[] {
  const merged: Finding[] = [];
  const byText = new Map<string, Finding>();
  for (const finding of findings) {
    const key = `${finding.level}\0${finding.message}`;
    const seen = byText.get(key);
    if (!seen) {
      const copy = { ...finding };
      byText.set(key, copy);
      merged.push(copy);
      continue;
    }
    seen.path = `${seen.path}, ${finding.path}`;
    if (finding.fix && !seen.fix?.split('; ').includes(finding.fix)) {
      seen.fix = seen.fix ? `${seen.fix}; ${finding.fix}` : finding.fix;
    }
  }
  return merged;
}

/**
 * The config in a few lines for `config check`: one line an agent with what a person checks first
 * (token source, directories, who may talk to it). `--json` has every setting.
 */
export function summarizeConfig(config: Config): string[] {
  const token = (agent: AgentConfig) => {
    const source = agent.token;
    if (!source) return 'no token (local sandbox)';
    switch (source.kind) {
      case 'inline':
        return 'token inline';
      case 'file':
        return `token from ${source.path}`;
      case 'env':
        return `token from $${source.name}`;
      case 'credential':
        return `token from systemd credential ${source.name}`;
    }
  };
  return [
    `${config.file}: ${config.agents.length} agent(s)`,
    ...config.agents.map(
      (agent) =>
        `  ${agent.name}: ${token(agent)}; works in ${agent.workDir}; state in ${agent.stateDir}; ${agent.allow.length} allowed user(s)${
          agent.chats.length > 0 ? `; ${agent.chats.length} chat setting(s)` : ''
        }`,
    ),
  ];
}

/**
 * `switchyard config check [--json]`: the file's problems and what it points at, printed; resolves with
 * 2 when the file is refused (as every command refuses it), 1 when only what it points at is wrong.
 */
export function configCheckCommand(
  configFile: string,
  environment: ConfigEnvironment,
  json: boolean,
): number {
  const { config, problems } = checkConfigFile(configFile, environment);
  // Unknown keys still leave a config whose host side can be checked: report both at once.
  const findings = config ? checkConfigResources(config, environment) : [];
  const errors = problems.length + findings.filter((f) => f.level === 'error').length;
  if (json) {
    const described = config ? (JSON.parse(describeConfig(config)) as object) : { file: configFile };
    console.log(JSON.stringify({ ...described, ok: errors === 0, problems, findings }, null, 2));
  } else {
    // A summary of a file that will be refused would read as if it were fine: only for a valid one.
    if (config && problems.length === 0) for (const line of summarizeConfig(config)) console.log(line);
    for (const problem of problems) console.error(`ERROR ${problem}`);
    for (const line of formatFindings(mergeRepeated(findings))) console.error(line);
    console.error(
      errors === 0
        ? `${configFile}: ok (--json shows every setting as it will be used)`
        : `${configFile}: ${errors} problem(s): fix them and run switchyard config check again`,
    );
  }
  return problems.length > 0 ? 2 : errors === 0 ? 0 : 1;
}
