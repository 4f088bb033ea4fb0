/**
 * The environment that points a real `claude` CLI at a scripted model, so everything that runs the CLI
 * offline (the sandbox, the tests, the fixture recorder) sets the same variables in one way.
 */

/** Environment variables for a `claude` process talking to the scripted model at `baseUrl`. */
export function scriptedClaudeEnv(options: {
  baseUrl: string;
  /** The CLI's own `~/.claude`: settings and transcripts; give each run its own. */
  configDir: string;
  /** Any value; the CLI sends it as `x-api-key` and the scripted model ignores it. */
  apiKey?: string;
  /**
   * `api-key` (default): `ANTHROPIC_API_KEY`. `subscription`: `CLAUDE_CODE_OAUTH_TOKEN`, as a claude.ai
   * login, which the CLI sends as a bearer token and under which a usage limit is not retried.
   */
  login?: 'api-key' | 'subscription';
}): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: options.baseUrl,
    ...(options.login === 'subscription'
      ? { CLAUDE_CODE_OAUTH_TOKEN: options.apiKey ?? 'sk-ant-oat01-scripted' }
      : { ANTHROPIC_API_KEY: options.apiKey ?? 'sk-scripted' }),
    CLAUDE_CONFIG_DIR: options.configDir,
    // No telemetry, update checks or other calls off this machine.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}
