#!/usr/bin/env node
/**
 * `switchyard`: the one command operators and developers run. It reads the config, validates it, and
 * hands typed options to the services' factories. See `switchyard help`.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { createMetrics } from '@switchyard/gateway';
import { describeError, lockStateDir } from '@switchyard/protocol';
import { AddAgentError, addAgent } from './add-agent.js';
import { backupAgent } from './backup.js';
import {
  type AgentConfig,
  type Config,
  ConfigError,
  checkConfigFile,
  describeConfig,
  loadConfig,
  resolveConfigPath,
} from './config.js';
import { checkConfigResources, formatFindings, summarizeConfig } from './config-check.js';
import { doctorAgent } from './doctor.js';
import { createLogger } from './log.js';
import { OperateError, restartAgent, showLogs } from './operate.js';
import { asServicesSee } from './operator-paths.js';
import { runSandbox } from './sandbox.js';
import { unitSecretProblems } from './secret-exposure.js';
import { makeBridge, makeGateway, stopClaude, superviseAgent } from './services.js';
import { untilStopSignal } from './signals.js';
import { agentStatus, formatStatus, isHealthy } from './status.js';
import { RESTART_BRIDGE_MESSAGE } from './supervisor.js';
import { unitStopped } from './unit-stop.js';

const USAGE = `usage: switchyard [--config PATH] <command>

commands:
  up                 start everything: the agents in the config against Telegram, or the local
                     sandbox when no config with a bot token exists (this is what \`pnpm start\` runs)
  sandbox            run a demo agent against the local Telegram sandbox and print its web chat URL
  run AGENT          run the gateway and the bridge of AGENT as child processes (development)
  gateway AGENT      run the gateway service of AGENT (systemd: switchyard-gateway@AGENT)
  bridge AGENT       run the bridge service of AGENT (systemd: switchyard-agent@AGENT)
  add-agent NAME     create what agent NAME needs on this host (root): its config entry, user sy-NAME,
                     working directory, token credential; then run doctor as that user. Idempotent.
                     --allow ID[,ID] (new entry), --token-file PATH (else the token is read from
                     stdin), --work-dir, --state-dir, --runtime-dir, --api-root; config default
                     $SWITCHYARD_ETC/switchyard.yaml (/etc/switchyard); SWITCHYARD_NO_SYSTEM=1: no users
  stop-claude AGENT  stop AGENT's Claude process for good (a bridge stop leaves it running)
  doctor [AGENT]     check every agent (or AGENT) can start, and say how to fix what is wrong
  status [AGENT]     services, connection, Claude processes, turns, queues, prompts, pins, last error,
                     cost today and per session
  restart AGENT      restart the bridge (Claude processes are adopted); --hard ends them too
  logs AGENT [-f]    the agent's logs from journald (pretty at a terminal; -f follows)
  backup AGENT DEST  a consistent copy of the agent's state (online SQLite backup) into DEST
  config check       validate the config and what it points at (token source, working directory,
                     claude binary); a line per agent (--json: every setting as it
                     will be used, secrets masked)
  unit-stopped AGENT the agent unit's ExecStopPost= hook: stop Claude if the unit is being stopped,
                     keep it for a restart (see deploy/README.md)
  help               this text

doctor, status and config check take --json. The config is --config PATH, else $SWITCHYARD_CONFIG, else
./switchyard.yaml.`;

const mainPath = fileURLToPath(import.meta.url);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      follow: { type: 'boolean', short: 'f' },
      hard: { type: 'boolean' },
      allow: { type: 'string', multiple: true },
      'token-file': { type: 'string' },
      'work-dir': { type: 'string' },
      'state-dir': { type: 'string' },
      'runtime-dir': { type: 'string' },
      'api-root': { type: 'string' },
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

  if (values.help || command === undefined || command === 'help') {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'config': {
      if (arg !== 'check') throw new UsageError('usage: switchyard config check [--json]');
      const { config, problems } = checkConfigFile(configFile, environment);
      // Unknown keys still leave a config whose host side can be checked: report both at once.
      const findings = config ? checkConfigResources(config, environment) : [];
      const errors = problems.length + findings.filter((f) => f.level === 'error').length;
      if (values.json) {
        const described = config ? (JSON.parse(describeConfig(config)) as object) : { file: configFile };
        console.log(JSON.stringify({ ...described, ok: errors === 0, problems, findings }, null, 2));
      } else {
        if (config) for (const line of summarizeConfig(config)) console.log(line);
        for (const problem of problems) console.error(`ERROR ${problem}`);
        for (const line of formatFindings(findings)) console.error(line);
        console.error(
          errors === 0
            ? `${configFile}: ok (--json shows every setting as it will be used)`
            : `${configFile}: ${errors} problem(s): fix them and run switchyard config check again`,
        );
      }
      // 2, as for every refused config; 1 when only what it points at is wrong.
      return problems.length > 0 ? 2 : errors === 0 ? 0 : 1;
    }
    case 'gateway': {
      const config = load();
      const agent = agentOf(config);
      refuseSecretsUnderUnit(config, agent);
      const logger = createLogger({ agent: agent.name, service: 'gateway' });
      const metrics = agent.metrics ? createMetrics({ ...agent.metrics, agent: agent.name }) : undefined;
      const gateway = makeGateway(
        agent,
        environment,
        config.file,
        logger,
        bridgeRestarter(agent.name),
        metrics,
      );
      if (metrics)
        logger.info({ event: 'metrics_listening', url: await metrics.start() }, 'metrics endpoint up');
      await gateway.start();
      await untilSignal(logger, async () => {
        await gateway.stop();
        await metrics?.stop();
      });
      return 0;
    }
    case 'bridge': {
      const config = load();
      const agent = agentOf(config);
      refuseSecretsUnderUnit(config, agent);
      const logger = createLogger({ agent: agent.name, service: 'bridge' });
      const bridge = makeBridge(agent, logger);
      await bridge.start();
      // A signal is a restart (deploy, systemctl restart): the Claude process stays for the next bridge.
      await untilSignal(logger, () => bridge.stop('restart'));
      return 0;
    }
    case 'stop-claude': {
      const agent = agentOf(load());
      const logger = createLogger({ agent: agent.name, service: 'stop-claude' });
      const outcome = await stopClaude(agent, logger);
      const said = {
        stopped: `stopped the Claude process of agent "${agent.name}"`,
        not_running: `agent "${agent.name}" has no Claude process running`,
        unknown: `cannot tell whether agent "${agent.name}"'s Claude process runs (see the log); nothing was signalled`,
      } as const;
      console.error(said[outcome]);
      return outcome === 'unknown' ? 1 : 0;
    }
    case 'unit-stopped': {
      const agent = agentOf(load());
      const logger = createLogger({ agent: agent.name, service: 'unit-stopped' });
      const outcome = await unitStopped({ agent, logger });
      return outcome.claude === 'unknown' ? 1 : 0;
    }
    case 'run': {
      const config = load();
      const agent = agentOf(config);
      const logger = createLogger({ agent: agent.name, service: 'run' });
      const taken = lockStateDir(agent.stateDir, 'run');
      if (!taken.ok) throw new Error(taken.message);
      const supervisor = superviseAgent({ mainPath, configFile: config.file, agent, logger });
      supervisor.start();
      await untilSignal(logger, () => supervisor.stop());
      taken.lock.release();
      return 0;
    }
    case 'doctor': {
      const config = load();
      const chosen = arg ? [agentOf(config)] : config.agents;
      const reports = [];
      for (const agent of chosen) {
        const index = config.agents.indexOf(agent);
        reports.push(await doctorAgent(asServicesSee(agent, config.file), index, config.file, environment));
      }
      const ok = reports.every((r) => r.canStart);
      if (values.json) console.log(JSON.stringify({ ok, agents: reports }, null, 2));
      else {
        for (const report of reports) {
          console.log(`${report.agent}: ${report.canStart ? 'can start' : 'CANNOT start'}`);
          for (const line of formatFindings(report.findings, { all: true })) console.log(`  ${line}`);
        }
      }
      return ok ? 0 : 1;
    }
    case 'status': {
      const config = load();
      const chosen = arg ? [agentOf(config)] : config.agents;
      const statuses = chosen.map((agent) => agentStatus(asServicesSee(agent, config.file), config.file));
      if (values.json) console.log(JSON.stringify({ agents: statuses }, null, 2));
      else console.log(statuses.map((s) => formatStatus(s)).join('\n\n'));
      return statuses.every(isHealthy) ? 0 : 3;
    }
    case 'restart': {
      const config = load();
      const agent = asServicesSee(agentOf(config), config.file);
      const logger = createLogger({ agent: agent.name, service: 'restart' });
      console.error(await restartAgent(agent, values.hard === true, logger, config.file));
      return 0;
    }
    case 'logs': {
      const config = load();
      return showLogs(agentOf(config), values.follow === true);
    }
    case 'backup': {
      const config = load();
      const agent = asServicesSee(agentOf(config), config.file);
      if (!extra) throw new UsageError('usage: switchyard backup AGENT DEST');
      if (!hasFiles(agent.stateDir)) {
        throw new OperateError(
          `agent "${agent.name}" has no state to back up: ${agent.stateDir} is missing or empty (the agent has not run on this host, or stateDir points elsewhere); nothing was written to ${path.resolve(extra)}`,
        );
      }
      const manifest = await backupAgent(agent, path.resolve(extra));
      console.error(
        `backed up ${manifest.files.length} file(s) of agent "${agent.name}" to ${path.resolve(extra)}`,
      );
      return manifest.files.length > 0 ? 0 : 1;
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
      return addAgent({
        name: arg,
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
      return runSandbox({ mainPath });
    case 'up': {
      let config: Config | undefined;
      try {
        config = load();
      } catch (err) {
        // No config yet is the newcomer's case: show the sandbox. A config with mistakes is not.
        if (!(err instanceof ConfigError && err.problems[0]?.startsWith('no such file'))) throw err;
      }
      const withToken = config?.agents.filter((a) => a.token !== undefined) ?? [];
      if (!config || withToken.length === 0) return runSandbox({ mainPath });
      const logger = createLogger({ service: 'up' });
      const locks = withToken.map((agent) => lockStateDir(agent.stateDir, 'run'));
      for (const taken of locks) if (!taken.ok) throw new Error(taken.message);
      const supervisors = withToken.map((agent) =>
        superviseAgent({
          mainPath,
          configFile: config.file,
          agent,
          logger: logger.child({ agent: agent.name }),
        }),
      );
      for (const supervisor of supervisors) supervisor.start();
      await untilSignal(logger, () => Promise.all(supervisors.map((s) => s.stop())).then(() => undefined));
      for (const taken of locks) if (taken.ok) taken.lock.release();
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

/** Under systemd a secret in the config is readable by every agent's Claude: the service does not start. */
function refuseSecretsUnderUnit(config: Config, agent: AgentConfig): void {
  const problems = unitSecretProblems(agent, process.env);
  if (problems.length > 0) throw new ConfigError(config.file, problems);
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

/**
 * How `/restart` reaches the bridge: the dev supervisor over IPC, or systemd. The gateway unit's user
 * needs permission to restart the agent unit (see deploy/README.md).
 */
function bridgeRestarter(agent: string): (() => Promise<void>) | undefined {
  if (process.send) {
    return async () => {
      process.send?.(RESTART_BRIDGE_MESSAGE);
    };
  }
  if (process.env.INVOCATION_ID) {
    return async () => {
      await promisify(execFile)('systemctl', ['restart', '--no-block', `switchyard-agent@${agent}.service`]);
    };
  }
  return undefined;
}

/** Resolves after SIGINT or SIGTERM has been handled by `stop` (see signals.ts for repeated signals). */
function untilSignal(logger: ReturnType<typeof createLogger>, stop: () => Promise<void>): Promise<void> {
  return untilStopSignal(stop, {
    onSignal: (signal) => logger.info({ event: 'stopping', signal }, 'stopping'),
  }).catch((err: unknown) => {
    logger.error({ event: 'stop_failed', err: describeError(err) }, 'stop failed');
  });
}

/** Whether `dir` exists and holds anything. */
function hasFiles(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
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
