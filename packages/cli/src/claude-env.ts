/**
 * The environment the Claude process gets: a short allowlist of the service's own variables plus the
 * agent's `claude.env`, never the service's whole environment. Claude runs tools for whoever writes to
 * the bot, so anything in its environment is as good as told to them: the bot token (`token: { env }`),
 * the webhook secrets and the voice key read from variables, `$CREDENTIALS_DIRECTORY`, other agents'
 * settings and Switchyard's own variables stay out.
 */
import type { AgentConfig } from './agent-config.js';

/** Variables passed through by name: what a shell, a compiler and the CLI's HTTP client expect. */
export const CLAUDE_ENV_NAMES = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'TMPDIR',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
] as const;

/**
 * Variables passed through by prefix: the CLI's own settings and login (`ANTHROPIC_API_KEY`,
 * `ANTHROPIC_BASE_URL`, `CLAUDE_CONFIG_DIR`, `CLAUDE_CODE_OAUTH_TOKEN`, …) and the locale.
 */
export const CLAUDE_ENV_PREFIXES = ['ANTHROPIC_', 'CLAUDE_', 'LC_'] as const;

/**
 * The variables `agent`'s secrets are read from — the bot token's, each webhook's secret's, the voice
 * key's (`{ env: NAME }`) — which only the gateway reads: neither the bridge nor Claude gets them.
 */
export function secretVariables(agent: AgentConfig): Set<string> {
  const names = new Set<string>();
  if (agent.token?.kind === 'env') names.add(agent.token.name);
  for (const hook of agent.webhooks?.hooks ?? []) if (hook.secret.kind === 'env') names.add(hook.secret.name);
  if (agent.voice?.kind === 'http' && agent.voice.key?.kind === 'env') names.add(agent.voice.key.name);
  return names;
}

/**
 * Claude's environment for `agent`, from the service's environment `serviceEnv`: the allowlisted
 * variables, then `claude.env` on top. The variables the agent's secrets are read from
 * ({@link secretVariables}) are left out even when their names match the allowlist.
 */
export function claudeEnvironment(agent: AgentConfig, serviceEnv: NodeJS.ProcessEnv): Record<string, string> {
  const secrets = secretVariables(agent);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(serviceEnv)) {
    if (value === undefined || secrets.has(name)) continue;
    const allowed =
      (CLAUDE_ENV_NAMES as readonly string[]).includes(name) ||
      CLAUDE_ENV_PREFIXES.some((prefix) => name.startsWith(prefix));
    if (allowed) env[name] = value;
  }
  return { ...env, ...agent.claude.env };
}

/**
 * The environment of the agent's bridge process under `run`, `up` and the sandbox: the service's own,
 * without the variables of the agent's secrets ({@link secretVariables}) and systemd's credentials
 * directory, which only the gateway reads.
 */
export function bridgeEnvironment(agent: AgentConfig, serviceEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...serviceEnv };
  for (const name of secretVariables(agent)) delete env[name];
  delete env.CREDENTIALS_DIRECTORY;
  return env;
}
