import type { FrameOf } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import {
  handoffHtml,
  resumeCommand,
  resumeListView,
  shellWord,
  shortDuration,
  type TerminalAction,
  utcStamp,
} from '../../src/core/commands/terminal-texts.js';

describe('terminal texts', () => {
  it.each([
    [0, '1970-01-01 00:00'],
    [Date.UTC(2026, 11, 1, 22, 51, 58), '2026-12-01 22:51'],
    [Date.UTC(2024, 1, 29, 23, 59), '2024-02-29 23:59'],
    [Date.UTC(2000, 0, 1, 0, 0), '2000-01-01 00:00'],
    [Date.UTC(2100, 2, 1, 12, 5), '2100-03-01 12:05'],
  ])('%i is %s UTC', (at, text) => {
    expect(utcStamp(at)).toBe(text);
  });

  it.each([
    [400, '0 s'],
    [40_000, '40 s'],
    [12 * 60_000, '12 min'],
    [3 * 3_600_000, '3 h'],
    [3 * 3_600_000 + 5 * 60_000, '3 h 5 min'],
    [72 * 3_600_000, '3 d'],
  ])('%i ms reads %s', (ms, text) => {
    expect(shortDuration(ms)).toBe(text);
  });

  it.each([
    ['/srv/work', '/srv/work'],
    ['/srv/my work', "'/srv/my work'"],
    ["it's", "'it'\\''s'"],
    ['$(rm -rf ~)', "'$(rm -rf ~)'"],
  ])('%s as a shell word is %s', (word, quoted) => {
    expect(shellWord(word)).toBe(quoted);
  });

  it('the terminal command names the config directory only when the agent sets one', () => {
    expect(resumeCommand('/srv/work', 'abc')).toBe('cd /srv/work && claude --resume abc');
    expect(resumeCommand('/srv/work', 'abc', '/etc/claude cfg')).toBe(
      "cd /srv/work && CLAUDE_CONFIG_DIR='/etc/claude cfg' claude --resume abc",
    );
  });

  it('a middle page has newer and older buttons; the current and busy sessions have none', () => {
    const actions: TerminalAction[] = [];
    const list: FrameOf<'resume_list'> = {
      type: 'resume_list',
      commandId: 'c',
      route: { chatId: 1 },
      workDir: '/w',
      page: 1,
      pageSize: 6,
      total: 14,
      sessions: [
        { sessionId: 'a', lastAt: 0, firstText: 'one', current: true },
        { sessionId: 'b', lastAt: 0, firstText: '', busy: 'held' },
        { sessionId: 'c', lastAt: 0, firstText: 'three' },
      ],
    };
    const view = resumeListView(list, (action) => `tm:${actions.push(action) - 1}`);
    expect(view.text).toContain('page 2 of 3');
    expect(view.text).toContain('7. 1970-01-01 00:00 UTC — “one” · this conversation’s');
    expect(view.text).toContain('8. 1970-01-01 00:00 UTC — (no message) · 🔒 held');
    expect(view.buttons.map((row) => row.map((b) => b.text))).toEqual([['▶ 9'], ['◀ Newer', 'Older ▶']]);
    expect(actions).toEqual([
      { kind: 'resume', sessionId: 'c' },
      { kind: 'page', page: 0 },
      { kind: 'page', page: 2 },
    ]);
  });

  it('in a group no session’s first words, working directory or config path are shown (issue 27)', () => {
    const list: FrameOf<'resume_list'> = {
      type: 'resume_list',
      commandId: 'c',
      route: { chatId: -100123 },
      workDir: '/home/ada/secret-project',
      page: 0,
      pageSize: 6,
      total: 1,
      sessions: [{ sessionId: 'a', lastAt: 0, firstText: 'my salary negotiation notes' }],
    };
    const view = resumeListView(list, () => 'tm:x');
    expect(view.text).not.toContain('salary');
    expect(view.text).not.toContain('/home/ada');
    expect(view.text).toContain('1. 1970-01-01 00:00 UTC');
    expect(resumeListView({ ...list, total: 0, sessions: [] }, () => 'tm:x').text).not.toContain('/home/ada');
    expect(resumeListView({ ...list, error: 'EACCES /home/ada/x' }, () => 'tm:x').text).not.toContain(
      '/home/ada',
    );
    const handoff = {
      type: 'handoff_result' as const,
      commandId: 'h',
      outcome: 'done' as const,
      sessionId: 'abc',
      workDir: '/home/ada/secret-project',
      configDir: '/home/ada/.claude-work',
    };
    const inGroup = handoffHtml({ ...handoff, route: { chatId: -100123 } });
    expect(inGroup).toContain('claude --resume abc');
    expect(inGroup).not.toContain('/home/ada');
    // The private chat still gets the whole command.
    expect(handoffHtml({ ...handoff, route: { chatId: 7 } })).toContain(
      'cd /home/ada/secret-project &amp;&amp; CLAUDE_CONFIG_DIR=/home/ada/.claude-work claude --resume abc',
    );
  });
});
