import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isSessionId, listTerminalSessions, summariseHead } from '../src/io/terminal/sessions.js';
import { projectDir } from '../src/io/transcript/files.js';

const line = (value: Record<string, unknown>): string => JSON.stringify(value);
const T0 = '2026-12-01T22:51:58.310Z';

describe('a session as /resume lists it', () => {
  it.each([
    [
      'a terminal session: its first user line',
      [
        line({ type: 'queue-operation', operation: 'enqueue', timestamp: T0, content: 'hello there' }),
        line({ type: 'user', message: { role: 'user', content: 'hello there' }, timestamp: T0 }),
      ],
      { startedAt: Date.parse(T0), firstText: 'hello there' },
    ],
    [
      'a bridge message: the Switchyard header is not shown',
      [
        line({
          type: 'user',
          timestamp: T0,
          message: { content: [{ type: 'text', text: '[telegram chat=1 inbound=abc]\nfix the login bug' }] },
        }),
      ],
      { startedAt: Date.parse(T0), firstText: 'fix the login bug' },
    ],
    [
      'the CLI’s own markup and meta lines are skipped',
      [
        line({ type: 'user', isMeta: true, message: { content: 'Caveat: …' } }),
        line({ type: 'user', message: { content: '<command-name>/clear</command-name>' } }),
        line({ type: 'user', isSidechain: true, message: { content: 'a sub-agent prompt' } }),
        line({ type: 'user', message: { content: 'the real words' } }),
      ],
      { firstText: 'the real words' },
    ],
    [
      'only a queued message: it is used',
      ['not json', line({ type: 'queue-operation', operation: 'enqueue', content: 'queued words' })],
      { firstText: 'queued words' },
    ],
    ['nothing a person wrote', [line({ type: 'summary', summary: 'x' })], { firstText: '' }],
  ])('%s', (_name, lines, expected) => {
    expect(summariseHead(lines)).toEqual(expected);
  });

  it('a long first message is cut to 120 characters', () => {
    const text = 'word '.repeat(100);
    expect(
      Array.from(summariseHead([line({ type: 'user', message: { content: text } })]).firstText),
    ).toHaveLength(120);
  });
});

describe('listing a directory’s sessions', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('newest first, only session files of that directory, with busy and current marked', () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-sessions-'));
    const project = projectDir(dir, '/srv/work');
    mkdirSync(project, { recursive: true });
    mkdirSync(projectDir(dir, '/srv/other'), { recursive: true });
    const ids = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
    ids.forEach((id, i) => {
      const path = join(project, `${id}.jsonl`);
      writeFileSync(path, `${line({ type: 'user', message: { content: `session ${i}` } })}\n`);
      utimesSync(path, 1000 + i, 1000 + i);
    });
    writeFileSync(join(project, 'notes.txt'), 'not a session');
    writeFileSync(join(projectDir(dir, '/srv/other'), '33333333-3333-4333-8333-333333333333.jsonl'), 'x\n');
    const page = listTerminalSessions(
      dir,
      '/srv/work',
      0,
      (id) => (id === ids[0] ? 'held' : undefined),
      ids[1],
    );
    expect(page.total).toBe(2);
    expect(page.sessions).toEqual([
      { sessionId: ids[1], lastAt: 1_001_000, firstText: 'session 1', current: true },
      { sessionId: ids[0], lastAt: 1_000_000, firstText: 'session 0', busy: 'held' },
    ]);
    expect(listTerminalSessions(dir, '/srv/none', 0, () => undefined, undefined).total).toBe(0);
  });
});

describe('a session id from a press', () => {
  it.each([
    ['5a86a0e9-9ef1-410e-b560-71945f2bf63f', true],
    ['../../../etc/passwd', false],
    ['5a86a0e9-9ef1-410e-b560-71945f2bf63f/../x', false],
    ['', false],
  ])('%j is a session id: %s', (id, ok) => {
    expect(isSessionId(id)).toBe(ok);
  });
});
