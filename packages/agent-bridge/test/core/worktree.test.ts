import { describe, expect, it } from 'vitest';
import { dirtyText, uncommitted, worktreeSpec } from '../../src/core/process/worktree.js';

describe('worktree per conversation', () => {
  it('lives in the state directory, on a branch named for the conversation', () => {
    expect(worktreeSpec('/var/lib/sy/bridge/', '/srv/repo', 'c-100123_t7')).toEqual({
      repo: '/srv/repo',
      path: '/var/lib/sy/bridge/worktrees/c-100123_t7',
      branch: 'switchyard/c-100123_t7',
    });
  });

  it.each([
    ['', []],
    [' M src/a.ts\n', ['src/a.ts']],
    ['?? notes.txt\nA  new.ts\n D gone.ts\n', ['notes.txt', 'new.ts', 'gone.ts']],
    ['R  old.ts -> new.ts\n', ['old.ts -> new.ts']],
  ])('porcelain %j is %j uncommitted', (porcelain, paths) => {
    expect(uncommitted(porcelain)).toEqual(paths);
  });

  it('a dirty worktree is refused with its changes listed (at most 20)', () => {
    const spec = worktreeSpec('/s', '/r', 'c1');
    const text = dirtyText(
      spec,
      Array.from({ length: 25 }, (_, i) => `f${i}.ts`),
    );
    expect(text).toContain('/s/worktrees/c1 (branch switchyard/c1) has uncommitted changes');
    expect(text).toContain('• f19.ts');
    expect(text).not.toContain('• f20.ts');
    expect(text).toContain('…and 5 more');
  });
});
