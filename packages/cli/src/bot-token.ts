/**
 * The bot token read from its source (inline, a file, an environment variable, a systemd credential),
 * when a service starts or a check runs: never earlier, so a config can be checked without the secret.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentConfig, ConfigEnvironment } from './agent-config.js';
import { ConfigError } from './config-error.js';
import { BOT_TOKEN } from './config-schema.js';

/** Reads the bot token from its source. Throws `ConfigError` naming the source (never the token). */
export function readToken(
  agent: AgentConfig,
  environment: ConfigEnvironment,
  file: string,
): string | undefined {
  const source = agent.token;
  if (!source) return undefined;
  const check = (value: string | undefined, where: string): string => {
    const token = value?.trim();
    if (!token) throw new ConfigError(file, [`agents(${agent.name}).token: ${where} is empty or missing`]);
    if (!BOT_TOKEN.test(token)) {
      throw new ConfigError(file, [`agents(${agent.name}).token: ${where} does not hold a bot token`]);
    }
    return token;
  };
  switch (source.kind) {
    case 'inline':
      return source.value;
    case 'env':
      return check(environment.env[source.name], `environment variable ${source.name}`);
    case 'file':
    case 'credential': {
      const directory = environment.env.CREDENTIALS_DIRECTORY;
      if (source.kind === 'credential' && !directory) {
        throw new ConfigError(file, [
          `agents(${agent.name}).token: credential ${source.name} needs $CREDENTIALS_DIRECTORY: run the gateway under its systemd unit (LoadCredential=${source.name}:…)`,
        ]);
      }
      const tokenPath = source.kind === 'file' ? source.path : path.join(directory ?? '', source.name);
      let text: string;
      try {
        text = readFileSync(tokenPath, 'utf8');
      } catch (err) {
        throw new ConfigError(file, [
          `agents(${agent.name}).token: cannot read ${tokenPath} (${(err as NodeJS.ErrnoException).code ?? err})`,
        ]);
      }
      return check(text.split('\n')[0], `file ${tokenPath}`);
    }
  }
}
