#!/usr/bin/env node
/**
 * `switchyard`: the one command operators and developers run. It reads the config, validates it, and
 * hands typed options to the services' factories. See `switchyard help`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeError } from '@switchyard/protocol';
import { AddAgentError, addAgent } from './add-agent.js';
import type { AgentConfig, Config } from './agent-config.js';
import { loadConfig, resolveConfigPath } from './config.js';
import { ConfigError } from './config-error.js';
import { OperateError } from './operate-error.js';
import { USAGE } from './usage.js';

// Only the config and the messages are loaded up front: a command that refuses its config (an unset
// token variable) answers before the services' code (grammY, SQLite, pino) is loaded, well within a
// second on a busy host. Each command imports what it runs.
const mainPath = fileURLToPath(import.meta.url);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'V' },
      json: { type: 'boolean' },
      follow: { type: 'boolean', short: 'f' },
      hard: { type: 'boolean' },
      cost: { type: 'boolean' },
      allow: { type: 'string', multiple: true },
      'token-file': { type: 'string' },
      'work-dir': { type: 'string' },
      'state-dir': { type: 'string' },
      'runtime-dir': { type: 'string' },
      'api-root': { type: 'string' },
      'bridge-host': { type: 'string' },
      'bridge-user': { type: 'string' },
      'bridge-port': { type: 'string' },
      identity: { type: 'string' },
      'known-hosts': { type: 'string' },
      'worker-root': { type: 'string' },
    },
    allowPositionals: true,
  });
  const [command, arg, extra] = positionals;
  const environment = { env: process.env, cwd: process.cwd() };
  const configFile = resolveConfigPath(values.config, environment);
  const load = (): Config => loadConfig(configFile, environment);
  const agentOf = (config: Config): AgentConfig => {
    const agent = config.agents.find((a) => a.name === arg);
    if (!agent) {
      const known = config.agents.map((a) => a.name).join(', ');
      throw new UsageError(
        arg ? `no agent "${arg}" in ${config.file} (agents: ${known})` : `name the agent (${known})`,
      );
    }
    return agent;
  };

  if (values.version && command === undefined) return versionCommand(values.json === true);
  if (values.help || command === undefined || command === 'help') {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'version':
      return versionCommand(values.json === true);
    case 'config': {
      if (arg !== 'check') throw new UsageError('usage: switchyard config check [--json]');
      const { configCheckCommand } = await import('./config-check.js');
      return configCheckCommand(configFile, environment, values.json === true);
    }
    case 'gateway': {
      const config = load();
      const { gatewayCommand } = await import('./service-commands.js');
      return gatewayCommand(config, agentOf(config), environment);
    }
    case 'bridge': {
      const config = load();
      const { bridgeCommand } = await import('./service-commands.js');
      return bridgeCommand(config, agentOf(config));
    }
    case 'link': {
      const config = load();
      const { linkCommand } = await import('./service-commands.js');
      return linkCommand(config, agentOf(config));
    }
    case 'stop-claude': {
      const agent = agentOf(load());
      return (await import('./service-commands.js')).stopClaudeCommand(agent);
    }
    case 'unit-stopped': {
      const agent = agentOf(load());
      return (await import('./service-commands.js')).unitStoppedCommand(agent);
    }
    case 'run': {
      const config = load();
      const agent = agentOf(config);
      const { runForeground } = await import('./foreground.js');
      return runForeground({ mainPath, config, agents: [agent], environment, command: 'run' });
    }
    case 'doctor': {
      const config = load();
      const chosen = arg ? [agentOf(config)] : config.agents;
      const { doctorCommand } = await import('./operator-commands.js');
      return doctorCommand(config, chosen, environment, values.json === true);
    }
    case 'status': {
      const config = load();
      const chosen = arg ? [agentOf(config)] : config.agents;
      const commands = await import('./operator-commands.js');
      return values.cost
        ? commands.costCommand(config, chosen, values.json === true)
        : commands.statusCommand(config, chosen, values.json === true);
    }
    case 'restart': {
      const config = load();
      const agent = agentOf(config);
      return (await import('./operator-commands.js')).restartCommand(config, agent, values.hard === true);
    }
    case 'logs': {
      const agent = agentOf(load());
      return (await import('./operator-commands.js')).logsCommand(agent, values.follow === true);
    }
    case 'backup': {
      const config = load();
      const agent = agentOf(config);
      if (!extra) throw new UsageError('usage: switchyard backup AGENT DEST');
      return (await import('./operator-commands.js')).backupCommand(config, agent, extra);
    }
    case 'restore': {
      const config = load();
      const agent = agentOf(config);
      if (!extra)
        throw new UsageError('usage: switchyard restore AGENT SRC (a directory switchyard backup wrote)');
      return (await import('./operator-commands.js')).restoreCommand(config, agent, extra);
    }
    case 'add-agent': {
      if (!arg) throw new UsageError('usage: switchyard add-agent NAME [--allow ID] [--token-file PATH]');
      const system = process.env.SWITCHYARD_NO_SYSTEM !== '1';
      if (system && process.getuid?.() !== 0) {
        throw new UsageError('add-agent creates a user and root-only files: run it as root (sudo)');
      }
      const etcDir = process.env.SWITCHYARD_ETC || '/etc/switchyard';
      const explicit = values.config !== undefined || Boolean(process.env.SWITCHYARD_CONFIG);
      const tokenFile = values['token-file'];
      const allow = (values.allow ?? []).flatMap((list) => list.split(',')).filter(Boolean);
      if (allow.some((id) => !/^-?\d+$/.test(id))) {
        throw new UsageError('--allow takes Telegram user ids (integers), comma-separated');
      }
      const port = values['bridge-port'];
      if (port !== undefined && !/^\d{1,5}$/.test(port))
        throw new UsageError('--bridge-port takes a TCP port');
      const host = values['bridge-host'];
      if (host === undefined && (values['bridge-user'] ?? port ?? values['worker-root']) !== undefined) {
        throw new UsageError(
          '--bridge-user, --bridge-port and --worker-root need --bridge-host (the worker)',
        );
      }
      return addAgent({
        name: arg,
        remote: host
          ? {
              host,
              user: values['bridge-user'],
              port: port === undefined ? undefined : Number(port),
              identityFile: values.identity && path.resolve(values.identity),
              knownHosts: values['known-hosts'] && path.resolve(values['known-hosts']),
              workerRoot: values['worker-root'] && path.resolve(values['worker-root']),
            }
          : undefined,
        configFile: explicit ? configFile : path.join(etcDir, 'switchyard.yaml'),
        etcDir,
        system,
        allow: allow.map(Number),
        workDir: values['work-dir'],
        stateDir: values['state-dir'],
        runtimeDir: values['runtime-dir'],
        apiRoot: values['api-root'],
        readToken: () => (tokenFile ? readFile(tokenFile, 'utf8') : readTokenFromStdin()),
        environment,
        node: process.execPath,
        mainPath,
      });
    }
    case 'sandbox':
      return (await import('./sandbox.js')).runSandbox({ mainPath });
    case 'up': {
      let config: Config | undefined;
      try {
        config = load();
      } catch (err) {
        // No config yet is the newcomer's case: show the sandbox. A config with mistakes is not.
        if (!(err instanceof ConfigError && err.problems[0]?.startsWith('no such file'))) throw err;
      }
      const withToken = config?.agents.filter((a) => a.token !== undefined) ?? [];
      if (!config || withToken.length === 0) return (await import('./sandbox.js')).runSandbox({ mainPath });
      const { runForeground } = await import('./foreground.js');
      return runForeground({ mainPath, config, agents: withToken, environment, command: 'up' });
    }
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

/** `switchyard version [--json]`. */
async function versionCommand(json: boolean): Promise<number> {
  const { formatVersion, versionInfo } = await import('./version.js');
  const info = versionInfo();
  console.log(json ? JSON.stringify(info, null, 2) : formatVersion(info).join('\n'));
  return 0;
}

/** The bot token from stdin: pasted at a prompt on a terminal, or piped. */
async function readTokenFromStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('paste the bot token from @BotFather, then Enter: ');
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (process.stdin.isTTY && text.includes('\n')) break;
  }
  return text.split('\n')[0] ?? '';
}

class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure as `--json` callers read it: its kind, its message, and a config's problems one by one. */
function errorJson(err: unknown): { kind: string; message: string; file?: string; problems?: string[] } {
  if (err instanceof ConfigError) {
    return { kind: 'config', message: err.message, file: err.file, problems: err.problems };
  }
  if (err instanceof UsageError) return { kind: 'usage', message: err.message };
  if (err instanceof OperateError) return { kind: 'operate', message: err.message };
  return { kind: 'internal', message: describeError(err) };
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const expected =
      err instanceof ConfigError ||
      err instanceof UsageError ||
      err instanceof OperateError ||
      err instanceof AddAgentError;
    // A caller that asked for JSON reads stdout as JSON, failures included.
    if (argv.includes('--json')) {
      console.log(JSON.stringify({ ok: false, error: errorJson(err) }, null, 2));
      process.exit(expected ? 2 : 1);
    }
    if (expected) {
      console.error(err.message);
      process.exit(2);
    }
    console.error(`switchyard: ${describeError(err)}`);
    if (process.env.SWITCHYARD_DEBUG && err instanceof Error) console.error(err.stack);
    process.exit(1);
  },
);
