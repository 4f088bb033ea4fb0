import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import {
  type Claim,
  type ClaimRules,
  type ClaudeProcess,
  claimOf,
  claimRetryMs,
  claimText,
  isClaudeCommand,
  namedSession,
} from '../../src/core/terminal/session-claim.js';

const ID = '5a86a0e9-9ef1-410e-b560-71945f2bf63f';
const OTHER = '419741e9-c722-48b9-be85-076bba2ea928';
const WORK = '/srv/work';
const CLAUDE = '/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe';

const proc = (pid: number, args: string[], extra: Partial<ClaudeProcess> = {}): ClaudeProcess => ({
  pid,
  argv: [CLAUDE, ...args],
  cwd: WORK,
  startedAt: 1_000,
  own: false,
  ...extra,
});

describe('session claim: which command lines name a session', () => {
  it.each([
    [['--resume', ID], ID],
    [['-r', ID], ID],
    [[`--resume=${ID}`], ID],
    [['--session-id', ID], ID],
    [['-p', '--verbose', '--resume', ID, '--model', 'opus'], ID],
    // A picker, a fresh session, `--continue`: no session named.
    [['--resume'], undefined],
    [['--resume', '--verbose'], undefined],
    [['-p', 'hello'], undefined],
    [['--continue'], undefined],
  ])('%j names %s', (args, expected) => {
    expect(namedSession([CLAUDE, ...args])).toBe(expected);
  });

  it.each([
    [[CLAUDE], undefined, true],
    [['claude', '--resume', ID], undefined, true],
    [['/usr/bin/node', '/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js'], undefined, true],
    [['bash', '-c', 'claude'], undefined, false],
    [['/bin/sh', '/repo/node_modules/.bin/claude', '-p', '--resume', ID], '/usr/bin/dash', true],
    [['/bin/sh', '/repo/scripts/claude-helper'], '/usr/bin/dash', false],
    [['vim', 'claude.md'], undefined, false],
    [['./run'], '/opt/claude/claude', true],
  ])('%j (exe %s) is the CLI: %s', (argv, exe, expected) => {
    expect(isClaudeCommand(argv, exe)).toBe(expected);
  });
});

describe('session claim: who may be writing a session', () => {
  const now = 100_000;
  const quiet = { mtimeMs: 50_000, size: 10 };
  const resume: ClaimRules = { cwdRule: 'before_write', growingMs: 3000 };
  const gate: ClaimRules = { cwdRule: 'off', growingMs: 0 };
  const handedOff: ClaimRules = { cwdRule: 'any', growingMs: 3000, writtenAfter: 90_000 };
  const rows: [
    name: string,
    procs: ClaudeProcess[],
    transcript: typeof quiet | undefined,
    rules: ClaimRules,
    claim: Claim,
  ][] = [
    ['nobody', [], quiet, resume, { kind: 'free' }],
    [
      'a terminal on it by id',
      [proc(7, ['--resume', ID])],
      quiet,
      resume,
      { kind: 'process', pid: 7, named: true },
    ],
    [
      'the gate too sees one named',
      [proc(7, ['-r', ID])],
      quiet,
      gate,
      { kind: 'process', pid: 7, named: true },
    ],
    ['a terminal on another session', [proc(7, ['--resume', OTHER])], quiet, resume, { kind: 'free' }],
    [
      'the conversation’s own process, ignored',
      [proc(7, ['--resume', ID])],
      quiet,
      { ...resume, ignore: [7] },
      { kind: 'free' },
    ],
    [
      'a fresh claude in the directory since before the last write',
      [proc(8, ['-p', 'hi'], { startedAt: 40_000 })],
      quiet,
      resume,
      { kind: 'process', pid: 8, named: false },
    ],
    [
      '…started after the last write: not its writer',
      [proc(8, [], { startedAt: 60_000 })],
      quiet,
      resume,
      { kind: 'free' },
    ],
    [
      '…in another directory',
      [proc(8, [], { cwd: '/elsewhere', startedAt: 1 })],
      quiet,
      resume,
      { kind: 'free' },
    ],
    [
      '…of unknown start',
      [proc(8, [], { startedAt: undefined })],
      quiet,
      resume,
      { kind: 'process', pid: 8, named: false },
    ],
    ['…not asked (the plain gate)', [proc(8, [], { startedAt: 1 })], quiet, gate, { kind: 'free' }],
    [
      'after a handoff, a `claude --continue` opened since the last write counts too',
      [proc(8, ['--continue'], { startedAt: 95_000 })],
      quiet,
      handedOff,
      { kind: 'process', pid: 8, named: false },
    ],
    [
      '…the bridge’s own fresh process never counts by directory',
      [proc(9, [], { own: true, startedAt: 1 })],
      quiet,
      resume,
      { kind: 'free' },
    ],
    [
      'the bridge’s own process named on it counts',
      [proc(9, ['--resume', ID], { own: true })],
      quiet,
      gate,
      { kind: 'process', pid: 9, named: true },
    ],
    [
      'a transcript written 1 s ago',
      [],
      { mtimeMs: 99_000, size: 10 },
      resume,
      { kind: 'growing', ageMs: 1000 },
    ],
    ['…3 s ago is quiet enough', [], { mtimeMs: 97_000, size: 10 }, resume, { kind: 'free' }],
    ['…and the gate does not ask', [], { mtimeMs: 99_999, size: 10 }, gate, { kind: 'free' }],
    [
      'after a handoff: the bridge’s own last write is not growth',
      [],
      { mtimeMs: 99_000, size: 10 },
      { ...resume, writtenAfter: 99_500 },
      { kind: 'free' },
    ],
    [
      '…a write after the handoff is',
      [],
      { mtimeMs: 99_800, size: 10 },
      { ...resume, writtenAfter: 99_500 },
      { kind: 'growing', ageMs: 200 },
    ],
    [
      'no transcript, a claude in the directory',
      [proc(8, [], { startedAt: 1 })],
      undefined,
      resume,
      { kind: 'process', pid: 8, named: false },
    ],
  ];
  it.each(rows)('%s', (_name, procs, transcript, rules, expected) => {
    expect(claimOf(ID, WORK, transcript, procs, rules, now)).toEqual(expected);
  });

  it('says who holds it, in words', () => {
    expect(claimText({ kind: 'process', pid: 7, named: true })).toBe(
      'a Claude process (pid 7) is running on it',
    );
    expect(claimText({ kind: 'process', pid: 8, named: false })).toContain('running in its directory');
    expect(claimText({ kind: 'growing', ageMs: 1400 })).toContain('written 1 s ago');
  });

  it('a waiting message asks again with backoff on the clock: 1 s, doubling, up to 30 s', () => {
    const clock = new ManualClock(0);
    const asks: number[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      clock.advance(claimRetryMs(attempt));
      asks.push(clock.now());
    }
    expect(asks).toEqual([1000, 3000, 7000, 15_000, 31_000, 61_000, 91_000, 121_000]);
  });
});

describe('session claim: an orphan of a bridge killed between starting a process and recording it', () => {
  const FIFO = '/var/lib/sy/bridge/conversations/c42/stdin.fifo';
  const rules: ClaimRules = { cwdRule: 'off', growingMs: 0, fifo: FIFO };

  it('a process on this conversation’s own fifo is an orphan (stopped), not another writer to wait for', () => {
    // The soak held a conversation for the rest of its run behind one: "still open elsewhere", for ever.
    const orphan = proc(8218, ['-p', '--resume', ID], { own: true, stdin: FIFO });
    expect(claimOf(ID, WORK, undefined, [orphan], rules, 2_000)).toEqual({ kind: 'orphan', pid: 8218 });
    expect(claimText({ kind: 'orphan', pid: 8218 })).toMatch(/never recorded/);
  });

  it('another conversation’s process on the same session is still a writer to wait for; a terminal too', () => {
    const other = proc(7, ['-p', '--resume', ID], {
      own: true,
      stdin: '/var/lib/sy/bridge/conversations/c9/stdin.fifo',
    });
    expect(claimOf(ID, WORK, undefined, [other], rules, 2_000)).toEqual({
      kind: 'process',
      pid: 7,
      named: true,
    });
    const terminal = proc(8, ['--resume', ID], { stdin: '/dev/pts/3' });
    expect(claimOf(ID, WORK, undefined, [terminal], rules, 2_000)).toEqual({
      kind: 'process',
      pid: 8,
      named: true,
    });
    // Without the rule's fifo (an older caller), the orphan is only a writer, as before.
    const orphan = proc(8218, ['-p', '--resume', ID], { own: true, stdin: FIFO });
    expect(claimOf(ID, WORK, undefined, [orphan], { cwdRule: 'off', growingMs: 0 }, 2_000).kind).toBe(
      'process',
    );
  });
});
