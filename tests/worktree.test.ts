/**
 * A worktree per topic end to end (gateway and bridge as real processes, the real CLI, the Telegram
 * stand-in): a forum whose chat entry says `worktree: true` over a git repository gives each topic its own
 * `git worktree` on branch `switchyard/<conversation>`, made on first use, with Claude running there; two
 * topics change files at once, each in its own tree; `/status` names the worktree; the `/sessions` button
 * refuses to remove a worktree with uncommitted changes (listing them) and removes a clean one.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { conversationDir } from '@switchyard/agent-bridge';
import { conversationKey } from '@switchyard/protocol';
import { rule, type SandboxChat, say, write } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';
import { botSays, bridgeConnected } from './terminal.js';

const startSystem = systemPerTest();
const BOT = '@switchyard_sandbox_bot';
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-C', cwd, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });

describe('a worktree per topic', () => {
  it('gives each topic its own worktree on first use; two topics change files at once in their own trees', async () => {
    let forum: SandboxChat | undefined;
    const system = await startSystem({
      rules: [
        rule('write alpha', (ctx) => write(`${ctx.cwd}/alpha.txt`, 'alpha\n'), say('Wrote alpha.')),
        rule('write beta', (ctx) => write(`${ctx.cwd}/beta.txt`, 'beta\n'), say('Wrote beta.')),
      ],
      agent: (telegram) => {
        forum = telegram.createGroup({ title: 'repo', supergroup: true, forum: true, topics: ['a', 'b'] });
        return { chats: [{ chat: forum.id, worktree: true, permissionMode: 'acceptEdits' }] };
      },
    });
    const { telegram } = system;
    const [a, b] = forum?.topics ?? [];
    if (!forum || !a || !b) throw new Error('no forum');
    const work = path.join(system.dir, 'work');
    git(work, 'init', '-q', '-b', 'main');
    git(work, 'commit', '-q', '--allow-empty', '-m', 'start');
    const treeOf = (threadId: number) => {
      const dir = conversationDir(conversationKey({ chatId: forum?.id ?? 0, threadId }));
      return {
        dir,
        path: path.join(system.dir, 'state', 'bridge', 'worktrees', dir),
        branch: `switchyard/${dir}`,
      };
    };
    const treeA = treeOf(a.threadId);
    const treeB = treeOf(b.threadId);
    expect(existsSync(treeA.path)).toBe(false);
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    telegram.sendText(forum.id, `${BOT} write alpha`, { threadId: a.threadId });
    telegram.sendText(forum.id, `${BOT} write beta`, { threadId: b.threadId });
    await Promise.all([
      botSays(system, forum.id, (text) => text === 'Wrote alpha.'),
      botSays(system, forum.id, (text) => text === 'Wrote beta.'),
    ]);
    // Each topic's file is in its own tree, on its own branch; the main checkout has neither.
    expect(readFileSync(path.join(treeA.path, 'alpha.txt'), 'utf8')).toBe('alpha\n');
    expect(readFileSync(path.join(treeB.path, 'beta.txt'), 'utf8')).toBe('beta\n');
    expect(existsSync(path.join(treeA.path, 'beta.txt'))).toBe(false);
    expect(existsSync(path.join(treeB.path, 'alpha.txt'))).toBe(false);
    expect(existsSync(path.join(work, 'alpha.txt')) || existsSync(path.join(work, 'beta.txt'))).toBe(false);
    expect(git(treeA.path, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe(treeA.branch);
    expect(git(treeB.path, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe(treeB.branch);
    expect(git(work, 'worktree', 'list')).toContain(treeA.path);

    // /status names the worktree.
    telegram.sendText(forum.id, `/status@switchyard_sandbox_bot`, { threadId: a.threadId });
    await botSays(system, forum.id, (text) =>
      text.includes(`Worktree: ${treeA.path} (branch ${treeA.branch})`),
    );

    // Reset + worktree: refused while alpha.txt is uncommitted, and the list says so.
    telegram.sendText(forum.id, `/sessions@switchyard_sandbox_bot`, { threadId: a.threadId });
    const list = await botSays(system, forum.id, (text) => text.includes('conversation(s):'));
    const button = list.replyMarkup?.inline_keyboard.flat().find((k) => k.text.includes('+ worktree'));
    expect(button).toBeDefined();
    telegram.pressButton(forum.id, list.messageId, { text: button?.text ?? '' });
    const refused = await botSays(system, forum.id, (text) => text.includes('has uncommitted changes'));
    expect(refused.text).toContain('alpha.txt');
    expect(existsSync(treeA.path)).toBe(true);

    // Committed, it is removed; its branch stays.
    git(treeA.path, 'add', 'alpha.txt');
    git(treeA.path, 'commit', '-q', '-m', 'alpha');
    // A pressed button is spent: a fresh list.
    telegram.sendText(forum.id, `/sessions@switchyard_sandbox_bot`, { threadId: a.threadId });
    const again = await botSays(
      system,
      forum.id,
      (text) => text.includes('conversation(s):') && !text.includes('has uncommitted'),
      90_000,
      list.messageId,
    );
    telegram.pressButton(forum.id, again.messageId, { text: button?.text ?? '' });
    await botSays(system, forum.id, (text) => text.includes('removed its worktree'));
    expect(existsSync(treeA.path)).toBe(false);
    expect(git(work, 'branch', '--list', treeA.branch)).toContain(treeA.branch);
    expect(botMessages(telegram, forum.id).length).toBeGreaterThan(0);
  }, 240_000);
});
