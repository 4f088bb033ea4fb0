/**
 * A conversation's own git worktree (`worktree: true` for a chat or topic whose `workDir` is a git
 * repository), pure: where it lives, which branch it is on, and what `git status --porcelain` says is
 * left uncommitted. The shell (`worktree.ts`) runs git.
 *
 * Layout: `<stateDir>/worktrees/<conversation dir>` on branch `switchyard/<conversation dir>` (the
 * conversation's directory name, `conversationDir`, made from its key), so several topics change one
 * repository at once, each in its own tree and on its own branch.
 */

/** A conversation's worktree: the repository it belongs to, its path and its branch. */
export interface WorktreeSpec {
  repo: string;
  path: string;
  branch: string;
}

/** The branch prefix of every conversation's worktree. */
export const WORKTREE_BRANCH_PREFIX = 'switchyard/';

/** The worktree of the conversation whose directory name is `dirName`, in repository `repo`. */
export function worktreeSpec(stateDir: string, repo: string, dirName: string): WorktreeSpec {
  return {
    repo,
    path: `${stateDir.replace(/\/+$/, '')}/worktrees/${dirName}`,
    branch: `${WORKTREE_BRANCH_PREFIX}${dirName}`,
  };
}

/** The paths `git status --porcelain` (v1) names: what is uncommitted in a worktree. */
export function uncommitted(porcelain: string): string[] {
  return porcelain
    .split('\n')
    .filter((line) => line.length > 3)
    .map((line) => line.slice(3));
}

/** What a chat is told when a worktree is not removed because of uncommitted changes. */
export function dirtyText(spec: WorktreeSpec, paths: readonly string[]): string {
  const shown = paths.slice(0, 20);
  return [
    `The worktree ${spec.path} (branch ${spec.branch}) has uncommitted changes; it was not removed:`,
    ...shown.map((path) => `• ${path}`),
    ...(paths.length > shown.length ? [`…and ${paths.length - shown.length} more`] : []),
    'Commit or discard them, then press Reset again.',
  ].join('\n');
}
