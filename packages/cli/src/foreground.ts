/**
 * The foreground commands `switchyard run AGENT` and `switchyard up`: each agent's two services under
 * the development supervisor until a stop signal, or until a service refuses its config.
 *
 * A config that cannot work is refused here, before anything starts: every agent's bot token is read
 * as its gateway would read it, so an unset `token: { env: … }` ends the command at once with the
 * message and status 2. What only a service finds out (a voice key, a webhook secret) ends the command
 * the same way through {@link Supervisor.refused}: nothing is restarted against a config that is wrong.
 *
 * Outside systemd nothing loads a `token: { credential: NAME }` (the form `add-agent` writes), so `run`
 * does what the gateway unit's `LoadCredential=` would: it reads `<etc>/credentials/<agent>.token` and
 * hands it to its gateway alone in a private credentials directory. That makes `switchyard run` the way
 * to run an installed agent on a host without systemd (a container, Lima), with every kind of token.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { lockStateDir } from '@switchyard/protocol';
import type { AgentConfig, Config, ConfigEnvironment } from './agent-config.js';
import { readToken } from './bot-token.js';
import { ConfigError } from './config-error.js';
import { untilStopSignal } from './signals.js';
import { REFUSED_EXIT_STATUS, refusalText, type Supervisor } from './supervisor.js';

/** What {@link runForeground} needs from `main`. */
export interface ForegroundOptions {
  /** The `switchyard` entry point the services run as. */
  mainPath: string;
  config: Config;
  /** The agents to run: one for `run`, every agent with a token for `up`. */
  agents: readonly AgentConfig[];
  environment: ConfigEnvironment;
  /** The command, which names the log lines: `run` logs as its agent, `up` as itself with a child per agent. */
  command: 'run' | 'up';
}

/**
 * Runs the agents' services until SIGINT/SIGTERM (status 0) or until one refuses its config (status
 * 2, after stopping the rest). Throws {@link ConfigError} before starting anything when a token cannot
 * be read.
 */
export async function runForeground(options: ForegroundOptions): Promise<number> {
  const { config, environment } = options;
  const prepared = options.agents.map((agent) => ({
    agent,
    env: serviceEnvironment(agent, environment, config.file),
  }));
  // Loaded only once the config is known to work (see main.ts).
  const [{ createLogger }, { superviseAgent }] = await Promise.all([
    import('./log.js'),
    import('./services.js'),
  ]);
  const [only] = options.agents;
  const logger =
    options.command === 'run' && only
      ? createLogger({ agent: only.name, service: 'run' })
      : createLogger({ service: 'up' });
  const loggerFor = (agent: AgentConfig) =>
    options.command === 'run' ? logger : logger.child({ agent: agent.name });
  const locks = options.agents.map((agent) => lockStateDir(agent.stateDir, 'run'));
  const release = () => {
    for (const taken of locks) if (taken.ok) taken.lock.release();
    for (const agent of options.agents) rmSync(runCredentialsDir(agent), { recursive: true, force: true });
  };
  for (const taken of locks) {
    if (!taken.ok) {
      release();
      throw new Error(taken.message);
    }
  }
  const supervisors: Supervisor[] = prepared.map(({ agent, env }) =>
    superviseAgent({
      mainPath: options.mainPath,
      configFile: config.file,
      agent,
      logger: loggerFor(agent),
      env,
    }),
  );
  const stopAll = () => Promise.all(supervisors.map((s) => s.stop())).then(() => undefined);
  for (const supervisor of supervisors) supervisor.start();
  const signalled = untilStopSignal(stopAll, {
    onSignal: (signal) => logger.info({ event: 'stopping', signal }, 'stopping'),
  }).then(
    () => undefined,
    (err: unknown) => logger.error({ event: 'stop_failed', err: String(err) }, 'stop failed'),
  );
  const refusals = supervisors.map((s, i) =>
    s.refused.then((refusal) => ({ refusal, agent: prepared[i]?.agent.name ?? '' })),
  );
  const ended = await Promise.race([signalled, ...refusals]);
  if (!ended) {
    release();
    return 0;
  }
  await stopAll();
  release();
  console.error(refusalText(ended.agent, ended.refusal));
  return REFUSED_EXIT_STATUS;
}

/** The private credentials directory `run` gives its gateway, under the agent's runtime directory. */
function runCredentialsDir(agent: AgentConfig): string {
  return path.join(agent.runtimeDir, 'credentials');
}

/** Where `add-agent` wrote the agent's token, and the gateway unit's `LoadCredential=` reads it. */
export function credentialFile(agent: AgentConfig, env: NodeJS.ProcessEnv): string {
  return path.join(env.SWITCHYARD_ETC || '/etc/switchyard', 'credentials', `${agent.name}.token`);
}

/**
 * The environment both services of `agent` start with: this process's, plus the credentials directory
 * that stands in for `LoadCredential=` when the token is a credential and no unit loaded it. Reads the
 * token as the gateway will, so a token that cannot be read is refused here, before anything starts.
 */
function serviceEnvironment(
  agent: AgentConfig,
  environment: ConfigEnvironment,
  file: string,
): NodeJS.ProcessEnv {
  const env = environment.env;
  const source = agent.token;
  if (!source) {
    throw new ConfigError(file, [
      `agents(${agent.name}): no bot token: add token: to its config, or run \`switchyard sandbox\` to try it locally`,
    ]);
  }
  if (source.kind !== 'credential' || env.CREDENTIALS_DIRECTORY) {
    readToken(agent, environment, file);
    return env;
  }
  const from = credentialFile(agent, env);
  let text: string;
  try {
    text = readFileSync(from, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ConfigError(file, [
      `agents(${agent.name}).token: credential ${source.name} is loaded by the gateway unit from ${from}; outside the unit \`switchyard run\` reads that file itself, and cannot (${code}): run it as root (sudo switchyard run ${agent.name}), or start the units (systemctl start switchyard-gateway@${agent.name} switchyard-agent@${agent.name}), or name the token another way (token: { file: PATH } or { env: VARIABLE })`,
    ]);
  }
  const dir = runCredentialsDir(agent);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  writeFileSync(path.join(dir, source.name), text, { mode: 0o600 });
  const withCredentials = { ...env, CREDENTIALS_DIRECTORY: dir };
  try {
    readToken(agent, { ...environment, env: withCredentials }, file);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return withCredentials;
}
