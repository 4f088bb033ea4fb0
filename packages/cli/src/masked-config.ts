/**
 * The config as `switchyard config check --json` shows it: every setting as it will be used, every secret
 * masked (the token, secret-looking `claude.env` entries, voice and webhook keys).
 */
import type { Config } from './agent-config.js';
import { describeVoice } from './voice-config.js';
import { describeWebhooks } from './webhook-config.js';

/** The config as it will be used, with secrets masked: for `switchyard config check`. */
export function describeConfig(config: Config): string {
  const masked = config.agents.map((agent) => ({
    ...agent,
    token:
      agent.token === undefined
        ? '(none: local Telegram sandbox)'
        : agent.token.kind === 'inline'
          ? `${agent.token.value.split(':')[0]}:***`
          : agent.token.kind === 'file'
            ? `(from file ${agent.token.path})`
            : agent.token.kind === 'env'
              ? `(from environment variable ${agent.token.name})`
              : `(from systemd credential ${agent.token.name})`,
    claude: {
      ...agent.claude,
      env: Object.fromEntries(
        Object.keys(agent.claude.env).map((k) => [k, maskEnv(k, agent.claude.env[k] ?? '')]),
      ),
    },
    voice: describeVoice(agent.voice),
    webhooks: describeWebhooks(agent.webhooks),
  }));
  return JSON.stringify({ file: config.file, agents: masked }, null, 2);
}

function maskEnv(name: string, value: string): string {
  return /KEY|TOKEN|SECRET|PASSWORD/i.test(name) ? '***' : value;
}
