/**
 * Where Claude keeps a working directory's session files (`$CLAUDE_CONFIG_DIR/projects/<cwd, every
 * non-alphanumeric char as '-'>/`), and a search of them for a delivery marker: whether the CLI recorded a
 * message its process died before taking (asked by the supervisor: a resumed process has what the
 * transcript has). The tail that follows these files line by line is `transcript.ts`.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The directory Claude keeps a working directory's sessions in. */
export function projectDir(configDir: string, cwd: string): string {
  return join(configDir, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'));
}

/** `CLAUDE_CONFIG_DIR` as the CLI resolves it. */
export function claudeConfigDir(env: NodeJS.ProcessEnv): string {
  return env.CLAUDE_CONFIG_DIR ?? join(env.HOME ?? homedir(), '.claude');
}

/**
 * Whether any session file of this working directory contains `marker` (as it appears inside a JSON
 * string); reads at most the last `maxBytes` of each of the most recently modified files. Not proof that
 * a line was *not* read: a content-array message's `enqueue` line has no content on 2.1.328, and a steer
 * reaches the file only when the running turn takes it. The bridge uses it only for intents recorded
 * before stdin lines carried a uuid (see `delivery.ts`).
 */
export function findMarker(
  configDir: string,
  cwd: string,
  marker: string,
  maxBytes = 16 * 1024 * 1024,
): boolean {
  const dir = projectDir(configDir, cwd);
  const needle = Buffer.from(JSON.stringify(marker).slice(1, -1), 'utf8');
  let files: { path: string; mtime: number }[];
  try {
    files = readdirSync(dir)
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime)
      .slice(0, 3);
  } catch {
    return false;
  }
  for (const { path } of files) {
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, maxBytes);
      const buf = Buffer.allocUnsafe(length);
      readSync(fd, buf, 0, length, size - length);
      if (buf.indexOf(needle) >= 0) return true;
    } finally {
      closeSync(fd);
    }
  }
  return false;
}
