/**
 * The commands the services run as: `gateway AGENT` and `bridge AGENT` (what the systemd units and the
 * development supervisor start), `stop-claude AGENT` and the agent unit's `unit-stopped AGENT` hook.
 * Each maps the agent's config onto its service (services.ts) and runs it until a stop signal.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describeError, type Logger } from '@switchyard/protocol';
import type { AgentConfig, Config, ConfigEnvironment } from './agent-config.js';
import { bridgeEnvironment } from './claude-env.js';
import { ConfigError } from './config-error.js';
import { createLink, sshLinkArgs } from './link.js';
import { createLogger } from './log.js';
import { unitSecretProblems } from './secret-exposure.js';
import { makeBridge, stopClaude } from './services.js';
import { untilStopSignal } from './signals.js';
import { RESTART_BRIDGE_MESSAGE } from './supervisor.js';
import { unitStopped } from './unit-stop.js';

/** Runs the agent's gateway until SIGINT/SIGTERM; resolves with the exit status. */
export async function gatewayCommand(
  config: Config,
  agent: AgentConfig,
  environment: ConfigEnvironment,
): Promise<number> {
  refuseSecretsUnderUnit(config, agent);
  const logger = createLogger({ agent: agent.name, service: 'gateway' });
  // Loaded here, not above: the other commands of this module run without the gateway.
  const [{ createMetrics }, { makeGateway }] = await Promise.all([
    import('@switchyard/gateway'),
    import('./gateway-service.js'),
  ]);
  const metrics = agent.metrics ? createMetrics({ ...agent.metrics, agent: agent.name }) : undefined;
  const gateway = makeGateway(agent, environment, config.file, logger, bridgeRestarter(agent.name), metrics);
  if (metrics) logger.info({ event: 'metrics_listening', url: await metrics.start() }, 'metrics endpoint up');
  await gateway.start();
  await untilSignal(logger, async () => {
    await gateway.stop();
    await metrics?.stop();
  });
  return 0;
}

/** Runs the agent's bridge until SIGINT/SIGTERM; resolves with the exit status. */
export async function bridgeCommand(config: Config, agent: AgentConfig): Promise<number> {
  refuseSecretsUnderUnit(config, agent);
  const logger = createLogger({ agent: agent.name, service: 'bridge' });
  const bridge = makeBridge(agent, logger);
  await bridge.start();
  // A signal is a restart (deploy, systemctl restart): the Claude process stays for the next bridge.
  await untilSignal(logger, () => bridge.stop('restart'));
  return 0;
}

/**
 * `link AGENT`: on the gateway's host, the ssh link to the host the agent's bridge runs on (link.ts),
 * until SIGINT/SIGTERM. Its environment is this process's without what the gateway alone reads.
 */
export async function linkCommand(config: Config, agent: AgentConfig): Promise<number> {
  const remote = agent.bridge;
  if (!remote) {
    throw new ConfigError(config.file, [
      `agents(${agent.name}): its bridge runs beside the gateway (no bridge: block), so it needs no link; add bridge: { host, ssh: … } to run it on another host`,
    ]);
  }
  const logger = createLogger({ agent: agent.name, service: 'link' });
  const link = createLink({
    command: 'ssh',
    args: sshLinkArgs(remote, agent.socketPath),
    env: bridgeEnvironment(agent, process.env),
    logger,
  });
  link.start();
  await untilSignal(logger, () => link.stop());
  return 0;
}

/** `stop-claude AGENT`: ends the agent's Claude processes for good; 1 when it cannot tell. */
export async function stopClaudeCommand(agent: AgentConfig): Promise<number> {
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

/** The agent unit's `ExecStopPost=` hook (see unit-stop.ts). */
export async function unitStoppedCommand(agent: AgentConfig): Promise<number> {
  const logger = createLogger({ agent: agent.name, service: 'unit-stopped' });
  const outcome = await unitStopped({ agent, logger });
  return outcome.claude === 'unknown' ? 1 : 0;
}

/** Under systemd a secret in the config is readable by every agent's Claude: the service does not start. */
function refuseSecretsUnderUnit(config: Config, agent: AgentConfig): void {
  const problems = unitSecretProblems(agent, process.env);
  if (problems.length > 0) throw new ConfigError(config.file, problems);
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
function untilSignal(logger: Logger, stop: () => Promise<void>): Promise<void> {
  return untilStopSignal(stop, {
    onSignal: (signal) => logger.info({ event: 'stopping', signal }, 'stopping'),
  }).catch((err: unknown) => {
    logger.error({ event: 'stop_failed', err: describeError(err) }, 'stop failed');
  });
}
