/**
 * Maps one agent's config onto the services' factories. This is the only place that knows both the
 * config file's shape and the factories' options.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Bridge, createBridge, stopAllRecordedClaude } from '@switchyard/agent-bridge';
import { createGateway, type Gateway, type GatewayMetrics } from '@switchyard/gateway';
import type { Logger } from '@switchyard/protocol';
import { bridgeEnvironment, claudeEnvironment } from './claude-env.js';
import { type AgentConfig, type ConfigEnvironment, chatSettings, readToken } from './config.js';
import { createSupervisor, type Supervisor } from './supervisor.js';

/** Each service keeps its own part of the agent's state directory. */
export function serviceStateDir(agent: AgentConfig, service: 'gateway' | 'bridge'): string {
  return path.join(agent.stateDir, service);
}

/** The bridge service of one agent, configured from its config entry. */
export function makeBridge(agent: AgentConfig, logger: Logger, env: NodeJS.ProcessEnv = process.env): Bridge {
  mkdirSync(agent.runtimeDir, { recursive: true, mode: 0o700 });
  return createBridge({
    agent: agent.name,
    socketPath: agent.socketPath,
    stateDir: serviceStateDir(agent, 'bridge'),
    workDir: agent.workDir,
    claudeBin: agent.claude.bin,
    claudeArgs: agent.claude.args,
    env: claudeEnvironment(agent, env),
    ...(agent.claude.model ? { model: agent.claude.model } : {}),
    ...(agent.claude.permissionMode ? { permissionMode: agent.claude.permissionMode } : {}),
    ...(agent.claude.mcpConfig ? { mcpConfig: agent.claude.mcpConfig } : {}),
    restartOnExit: agent.claude.restartOnExit,
    stuckAfterMs: agent.claude.stuckAfterMs,
    conversations: agent.conversations,
    maxLiveSessions: agent.maxLiveSessions,
    idleStopMs: agent.idleStopMs,
    settingsFor: (route) => chatSettings(agent, route),
    files: agent.files,
    logger,
  });
}

/**
 * Who may reach the agent's socket. Under the systemd units (the runtime directory is systemd's,
 * `RUNTIME_DIRECTORY`) the bridge runs as the agent's own user, in the group systemd gave the runtime
 * directory: the socket is 0660 in a 0750 directory. Elsewhere both services run as one user: 0600 in 0700.
 */
export function socketAccess(
  agent: AgentConfig,
  env: NodeJS.ProcessEnv,
): { socketMode: number; socketDirectoryMode: number } {
  const shared =
    env.RUNTIME_DIRECTORY !== undefined && path.resolve(env.RUNTIME_DIRECTORY) === agent.runtimeDir;
  return shared
    ? { socketMode: 0o660, socketDirectoryMode: 0o750 }
    : { socketMode: 0o600, socketDirectoryMode: 0o700 };
}

/** The gateway service of one agent; reads the bot token from its source (never logged). */
export function makeGateway(
  agent: AgentConfig,
  environment: ConfigEnvironment,
  configFile: string,
  logger: Logger,
  restartBridge: (() => Promise<void>) | undefined,
  metrics?: GatewayMetrics,
): Gateway {
  const token = readToken(agent, environment, configFile);
  if (!token) {
    throw new Error(
      `agent "${agent.name}" has no bot token: add token: to its config, or run \`switchyard sandbox\` to try it locally`,
    );
  }
  return createGateway({
    agent: agent.name,
    token,
    apiRoot: agent.apiRoot,
    allowUsers: agent.allow,
    ...(agent.allowChats.length > 0 ? { allowChats: agent.allowChats } : {}),
    listenAllChats: agent.chats.filter((c) => c.listen === 'all').map((c) => c.chatId),
    ...(agent.alerts ? { alertChat: agent.alerts } : {}),
    stateDir: serviceStateDir(agent, 'gateway'),
    socketPath: agent.socketPath,
    ...socketAccess(agent, environment.env),
    card: agent.card,
    retentionDays: agent.retention.days,
    replies: agent.replies,
    ...(restartBridge ? { restartBridge } : {}),
    ...(metrics ? { metrics } : {}),
    logger,
  });
}

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
 * also ends the agent's claude process.
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
    logger,
    env: (service) => (service === 'bridge' ? bridgeEnvironment(agent, env) : env),
    onShutdown: async () => void (await stopClaude(agent, logger)),
  });
}
