/**
 * The gateway service of one agent, configured from its config entry: a module of its own, so that only
 * the `gateway` command loads the gateway (grammY, SQLite, the card, …). The bridge, `stop-claude` and the
 * operator commands read the same config without it.
 */

import { createGateway, type Gateway, type GatewayMetrics } from '@switchyard/gateway';
import type { Logger } from '@switchyard/protocol';
import type { AgentConfig, ConfigEnvironment } from './agent-config.js';
import { readToken } from './bot-token.js';
import { ConfigError } from './config-error.js';
import { exchangeFor, releaseName, SIMULATED_MODEL_ENV, serviceStateDir, socketAccess } from './services.js';
import { voiceOptions } from './voice-config.js';
import { webhookOptions } from './webhook-config.js';

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
    // A ConfigError (exit status 2): a supervisor does not restart a gateway that cannot work.
    throw new ConfigError(configFile, [
      `agents(${agent.name}): no bot token: add token: to its config, or run \`switchyard sandbox\` to try it locally`,
    ]);
  }
  const simulated = environment.env[SIMULATED_MODEL_ENV] === '1';
  const voice = voiceOptions(agent.voice, environment.env);
  if (!voice.ok) throw new ConfigError(configFile, [`agents(${agent.name}).voice.key: ${voice.problem}`]);
  const webhooks = webhookOptions(agent.webhooks, environment.env);
  if (!webhooks.ok) throw new ConfigError(configFile, [`agents(${agent.name}).${webhooks.problem}`]);
  return createGateway({
    agent: agent.name,
    token,
    apiRoot: agent.apiRoot,
    allowUsers: agent.allow,
    ...(agent.allowChats.length > 0 ? { allowChats: agent.allowChats } : {}),
    operators: agent.operators,
    listenAllChats: agent.chats.filter((c) => c.listen === 'all').map((c) => c.chatId),
    ...(agent.alerts ? { alertChat: agent.alerts } : {}),
    stateDir: serviceStateDir(agent, 'gateway'),
    socketPath: agent.socketPath,
    release: releaseName(),
    ...socketAccess(agent, environment.env),
    exchange: exchangeFor(agent, 'gateway', environment.env),
    // A bridge on another host shares no disk with this one: files cross the link as transfers.
    filesOverProtocol: agent.bridge !== undefined,
    // Its chats are told when that host cannot be reached for a while (the port is the operator's business).
    ...(agent.bridge ? { remoteBridge: { host: `${agent.bridge.ssh.user}@${agent.bridge.host}` } } : {}),
    card: simulated ? { ...agent.card, simulatedCost: true } : agent.card,
    ...(simulated ? { simulatedModel: true } : {}),
    retentionDays: agent.retention.days,
    replies: agent.replies,
    allowedModes: agent.allowedModes,
    ...(voice.options ? { voice: voice.options } : {}),
    spend: { ...agent.budget, ...(agent.timezone ? { timeZone: agent.timezone } : {}) },
    ...(webhooks.options ? { webhooks: webhooks.options } : {}),
    schedules: agent.schedules,
    ...(restartBridge ? { restartBridge } : {}),
    ...(metrics ? { metrics } : {}),
    logger,
  });
}
