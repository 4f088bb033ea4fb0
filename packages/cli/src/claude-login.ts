/**
 * Whether a `claude` started with a given environment has credentials: an API key or OAuth token in the
 * environment, or the credentials file of a login in its config directory. Linux keeps a login in
 * `$CLAUDE_CONFIG_DIR/.credentials.json` (default `~/.claude`); macOS keeps it in the Keychain, where
 * this cannot look, which is one reason Switchyard supports Linux only.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** How `claude` would authenticate, or where a login was looked for and not found. */
export type ClaudeLogin =
  | { kind: 'env'; variable: 'ANTHROPIC_API_KEY' | 'CLAUDE_CODE_OAUTH_TOKEN' }
  | { kind: 'file'; file: string }
  | { kind: 'none'; looked: string };

/** Looks in `env` (the environment claude gets) and its config directory; `home` defaults to this user's. */
export function claudeLogin(env: Record<string, string | undefined>, home = homedir()): ClaudeLogin {
  if (env.ANTHROPIC_API_KEY) return { kind: 'env', variable: 'ANTHROPIC_API_KEY' };
  if (env.CLAUDE_CODE_OAUTH_TOKEN) return { kind: 'env', variable: 'CLAUDE_CODE_OAUTH_TOKEN' };
  const file = path.join(env.CLAUDE_CONFIG_DIR || path.join(home, '.claude'), '.credentials.json');
  return existsSync(file) ? { kind: 'file', file } : { kind: 'none', looked: file };
}
