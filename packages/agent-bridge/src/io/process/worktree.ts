/**
 * The git half of a conversation's own worktree (`core/process/worktree.ts` says where and which branch):
 * created on first use, before its Claude process starts there, and removed on request only when
 * nothing is uncommitted. Git runs synchronously: once per process start at most, and on a press.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { uncommitted, type WorktreeSpec } from '../../core/process/worktree.js';
import { ChildError } from './child.js';

/** Runs git in `cwd`; its stdout, or throws with its stderr. */
function git(cwd: string, args: readonly string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 30_000,
  });
}

/** Git's complaint, for a chat. */
function gitError(err: unknown): string {
  const stderr = (err as { stderr?: unknown }).stderr;
  return (typeof stderr === 'string' && stderr.trim()) || (err as Error).message;
}

/** Whether the worktree exists on disk (its `.git` file is there). */
export function worktreeExists(spec: WorktreeSpec): boolean {
  return existsSync(join(spec.path, '.git'));
}

/**
 * Makes sure the worktree exists: on its branch if that branch exists (a worktree removed earlier comes
 * back with its commits), else on a new branch from the repository's HEAD. Throws a {@link ChildError}
 * saying what to fix when it cannot.
 */
export function ensureWorktree(spec: WorktreeSpec): void {
  if (worktreeExists(spec)) return;
  try {
    git(spec.repo, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  } catch {
    throw new ChildError(
      'spawn_failed',
      `worktree: true needs ${spec.repo} to be a git repository with at least one commit`,
    );
  }
  try {
    mkdirSync(dirname(spec.path), { recursive: true, mode: 0o700 });
    // A worktree deleted by hand is still registered: forget it before adding it again.
    git(spec.repo, ['worktree', 'prune']);
    let branchExists = true;
    try {
      git(spec.repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${spec.branch}`]);
    } catch {
      branchExists = false;
    }
    git(
      spec.repo,
      branchExists
        ? ['worktree', 'add', spec.path, spec.branch]
        : ['worktree', 'add', '-b', spec.branch, spec.path],
    );
  } catch (err) {
    throw new ChildError('spawn_failed', `could not create the worktree ${spec.path}: ${gitError(err)}`);
  }
}

/** What is uncommitted in the worktree (empty when clean or missing); throws when git cannot tell. */
export function worktreeChanges(spec: WorktreeSpec): string[] {
  if (!worktreeExists(spec)) return [];
  try {
    return uncommitted(git(spec.path, ['status', '--porcelain', '--untracked-files=all']));
  } catch (err) {
    throw new Error(`could not read the worktree's status: ${gitError(err)}`);
  }
}

/**
 * Removes the worktree (its branch and commits stay), unless something in it is uncommitted: then
 * nothing is done and those paths are returned.
 */
export function removeWorktree(
  spec: WorktreeSpec,
): { ok: true; existed: boolean } | { ok: false; dirty: string[] } | { ok: false; error: string } {
  if (!worktreeExists(spec)) return { ok: true, existed: false };
  try {
    const dirty = worktreeChanges(spec);
    if (dirty.length > 0) return { ok: false, dirty };
    git(spec.repo, ['worktree', 'remove', spec.path]);
    return { ok: true, existed: true };
  } catch (err) {
    return { ok: false, error: gitError(err) };
  }
}
