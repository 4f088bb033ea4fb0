/**
 * Maps one agent's config onto the services' factories. This is the only place that knows both the
 * config file's shape and the factories' options.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Bridge, createBridge, stopAllRecordedClaude } from '@switchyard/agent-bridge';
import type { ExchangeOptions, Logger } from '@switchyard/protocol';
import { type AgentConfig, chatSettings } from './agent-config.js';
import { bridgeEnvironment, claudeEnvironment } from './claude-env.js';
import { createSupervisor, type Supervisor } from './supervisor.js';
import { versionInfo } from './version.js';

/** Each service keeps its own part of the agent's state directory. */
export function serviceStateDir(agent: AgentConfig, service: 'gateway' | 'bridge'): string {
  return path.join(agent.stateDir, service);
}

/** The bridge service of one agent, configured from its config entry. */
export function makeBridge(agent: AgentConfig, logger: Logger, env: NodeJS.ProcessEnv = process.env): Bridge {
  // A bridge on another host connects to the socket its link's sshd listens on there (bridgeSocket).
  mkdirSync(path.dirname(bridgeSocket(agent)), { recursive: true, mode: 0o700 });
  return createBridge({
    agent: agent.name,
    socketPath: bridgeSocket(agent),
    release: releaseName(),
    stateDir: serviceStateDir(agent, 'bridge'),
    exchange: exchangeFor(agent, 'bridge', env),
    // A bridge on another host shares no disk with its gateway: files cross the link as transfers.
    filesOverProtocol: agent.bridge !== undefined,
    retentionDays: agent.retention.days,
    workDir: agent.workDir,
    claudeBin: agent.claude.bin,
    claudeArgs: agent.claude.args,
    env: claudeEnvironment(agent, env),
    ...(agent.claude.model ? { model: agent.claude.model } : {}),
    ...(agent.claude.permissionMode ? { permissionMode: agent.claude.permissionMode } : {}),
    permissions: { allowedModes: agent.allowedModes, alwaysAllowScope: agent.alwaysAllowScope },
    automationMode: agent.automationMode,
    ...(agent.claude.mcpConfig ? { mcpConfig: agent.claude.mcpConfig } : {}),
    restartOnExit: agent.claude.restartOnExit,
    stuckAfterMs: agent.claude.stuckAfterMs,
    waitOutUsageLimit: agent.claude.waitOutUsageLimit,
    conversations: agent.conversations,
    maxLiveSessions: agent.maxLiveSessions,
    idleStopMs: agent.idleStopMs,
    settingsFor: (route) => chatSettings(agent, route),
    files: agent.files,
    logger,
  });
}

/**
 * The socket the agent's bridge connects to: the gateway's own, or, for a bridge on another host, the
 * one the link's sshd listens on there (`bridge.socket`).
 */
export function bridgeSocket(agent: AgentConfig): string {
  return agent.bridge?.socketPath ?? agent.socketPath;
}

/**
 * This release as the handshake names it: the installed release's name, else the package version (a
 * checkout). Read from files only: a service start runs no git.
 */
export function releaseName(): string {
  const info = versionInfo(undefined, { git: false });
  return info.release ?? info.version;
}

/**
 * Whether this service runs under its systemd unit, where gateway and bridge are different users of the
 * agent's group: systemd gave it this agent's directory (the gateway unit's `RuntimeDirectory=`, the
 * agent unit's `StateDirectory=`). Elsewhere one user runs both.
 */
export function underUnit(
  agent: AgentConfig,
  service: 'gateway' | 'bridge',
  env: NodeJS.ProcessEnv,
): boolean {
  const given = service === 'gateway' ? env.RUNTIME_DIRECTORY : env.STATE_DIRECTORY;
  const own = service === 'gateway' ? agent.runtimeDir : serviceStateDir(agent, 'bridge');
  return given !== undefined && path.resolve(given) === own;
}

/**
 * Who may reach the agent's socket. Under the systemd units the bridge runs as the agent's own user, in
 * the group systemd gave the runtime directory: the socket is 0660 in a 0750 directory. Elsewhere both
 * services run as one user: 0600 in 0700.
 */
export function socketAccess(
  agent: AgentConfig,
  env: NodeJS.ProcessEnv,
): { socketMode: number; socketDirectoryMode: number } {
  return underUnit(agent, 'gateway', env)
    ? { socketMode: 0o660, socketDirectoryMode: 0o750 }
    : { socketMode: 0o600, socketDirectoryMode: 0o700 };
}

/**
 * The agent's exchange directory as one service sees it. Under its unit the service's primary group is
 * the agent's (`Group=sy-NAME` in both units), shared with the other side: 2770 and files 0640. Elsewhere
 * one user: 0700 and 0600.
 */
export function exchangeFor(
  agent: AgentConfig,
  service: 'gateway' | 'bridge',
  env: NodeJS.ProcessEnv,
  gid: number = process.getgid?.() ?? 0,
): ExchangeOptions {
  return underUnit(agent, service, env) ? { dir: agent.exchangeDir, group: gid } : { dir: agent.exchangeDir };
}

/**
 * Set to `1` in the services' environment by the sandbox when the agent's model is the built-in scripted
 * one: the gateway then labels costs and the model as simulated. An environment variable rather than a
 * config key: only the sandbox sets it, for the children it starts, and no config file can claim it.
 */
export const SIMULATED_MODEL_ENV = 'SWITCHYARD_SIMULATED_MODEL';

/**
 * Ends the agent's Claude processes for good, one per conversation (a bridge stop leaves them running on
 * purpose). Stop the
 * bridge first: a running bridge configured to restart Claude would start a new one.
 */
export function stopClaude(
  agent: AgentConfig,
  logger: Logger,
): Promise<'stopped' | 'not_running' | 'unknown'> {
  return stopAllRecordedClaude({ stateDir: serviceStateDir(agent, 'bridge'), logger });
}

/**
 * Both services of one agent as child processes of this one (`run`, `up`, the sandbox); a real stop
 * also ends the agent's claude process. For a bridge on another host: the gateway and the link (the
 * bridge runs there, under its own unit or `switchyard bridge`).
 */
export function superviseAgent(options: {
  /** This command's entry point, which the children run as `gateway` and `bridge`. */
  mainPath: string;
  configFile: string;
  agent: AgentConfig;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}): Supervisor {
  const { mainPath, configFile, agent, logger } = options;
  const env = options.env ?? process.env;
  return createSupervisor({
    command: (service) => [mainPath, '--config', configFile, service, agent.name],
    peer: agent.bridge ? 'link' : 'bridge',
    logger,
    env: (service) => (service === 'gateway' ? env : bridgeEnvironment(agent, env)),
    // A remote bridge's Claude processes are the worker host's: nothing of them runs here.
    onShutdown: async () => void (agent.bridge ? undefined : await stopClaude(agent, logger)),
  });
}
