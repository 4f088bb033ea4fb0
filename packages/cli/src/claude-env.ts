/**
 * The environment the Claude process gets: a short allowlist of the service's own variables plus the
 * agent's `claude.env`, never the service's whole environment. Claude runs tools for whoever writes to
 * the bot, so anything in its environment is as good as told to them: the bot token (`token: { env }`),
 * `$CREDENTIALS_DIRECTORY`, other agents' settings and Switchyard's own variables stay out.
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
 * Claude's environment for `agent`, from the service's environment `serviceEnv`: the allowlisted
 * variables, then `claude.env` on top. The variable the agent's bot token is read from is left out even
 * when its name matches the allowlist.
 */
export function claudeEnvironment(agent: AgentConfig, serviceEnv: NodeJS.ProcessEnv): Record<string, string> {
  const tokenVariable = agent.token?.kind === 'env' ? agent.token.name : undefined;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(serviceEnv)) {
    if (value === undefined || name === tokenVariable) continue;
    const allowed =
      (CLAUDE_ENV_NAMES as readonly string[]).includes(name) ||
      CLAUDE_ENV_PREFIXES.some((prefix) => name.startsWith(prefix));
    if (allowed) env[name] = value;
  }
  return { ...env, ...agent.claude.env };
}

/**
 * The environment of the agent's bridge process under `run`, `up` and the sandbox: the service's own,
 * without the bot token's variable and systemd's credentials directory, which only the gateway reads.
 */
export function bridgeEnvironment(agent: AgentConfig, serviceEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...serviceEnv };
  if (agent.token?.kind === 'env') delete env[agent.token.name];
  delete env.CREDENTIALS_DIRECTORY;
  return env;
}
