/**
 * Whether a `claude` started with a given environment has credentials: an API key or OAuth token in the
 * environment, or the credentials file of a login in its config directory. Linux keeps a login in
 * `$CLAUDE_CONFIG_DIR/.credentials.json` (default `~/.claude`); macOS keeps it in the Keychain, where
 * this cannot look, which is one reason Switchyard supports Linux only.
 *
 * A file is a login only when it holds one: an OAuth access token (`claudeAiOauth.accessToken`, what
 * `/login` writes). An empty `{}` (a logout, or a file made by hand) is reported as no login, and a file
 * this user may not read (another user's login, checked without root) as unknown rather than fine.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** How `claude` would authenticate, or where a login was looked for and not found. */
export type ClaudeLogin =
  | { kind: 'env'; variable: 'ANTHROPIC_API_KEY' | 'CLAUDE_CODE_OAUTH_TOKEN' }
  | { kind: 'file'; file: string }
  /** No login: `looked` is the file, `problem` what is wrong with it ("does not exist", "holds no login"). */
  | { kind: 'none'; looked: string; problem: string }
  /** The file exists but this process may not read it (`code`: EACCES, EPERM). */
  | { kind: 'unreadable'; file: string; code: string };

/** Looks in `env` (the environment claude gets) and its config directory; `home` defaults to this user's. */
export function claudeLogin(env: Record<string, string | undefined>, home = homedir()): ClaudeLogin {
  if (env.ANTHROPIC_API_KEY) return { kind: 'env', variable: 'ANTHROPIC_API_KEY' };
  if (env.CLAUDE_CODE_OAUTH_TOKEN) return { kind: 'env', variable: 'CLAUDE_CODE_OAUTH_TOKEN' };
  const file = path.join(env.CLAUDE_CONFIG_DIR || path.join(home, '.claude'), '.credentials.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    if (code === 'EACCES' || code === 'EPERM') return { kind: 'unreadable', file, code };
    return { kind: 'none', looked: file, problem: 'does not exist' };
  }
  return holdsLogin(text)
    ? { kind: 'file', file }
    : { kind: 'none', looked: file, problem: 'holds no login' };
}

/** Whether a credentials file's text holds an OAuth login (`claudeAiOauth.accessToken`). */
function holdsLogin(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as { claudeAiOauth?: { accessToken?: unknown } } | null;
    const token = parsed?.claudeAiOauth?.accessToken;
    return typeof token === 'string' && token.length > 0;
  } catch {
    return false;
  }
}

/** The login in words, for a finding or the sandbox's first lines: "no FILE (it holds no login)". */
export function describeMissingLogin(login: Extract<ClaudeLogin, { kind: 'none' }>): string {
  return login.problem === 'does not exist' ? `no ${login.looked}` : `${login.looked} ${login.problem}`;
}
