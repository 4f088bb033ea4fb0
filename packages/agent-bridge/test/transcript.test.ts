/**
 * `TranscriptTail` on temp files: lines appended in pieces, truncation, rotation, a new session file
 * after `/clear`, idle sub-agent files released and taken up again, and a restart from a checkpoint that
 * neither skips nor repeats a line. Reads are driven by explicit `rescan()` calls (deterministic) except
 * where the `fs.watch` path itself is under test.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectDir } from '../src/io/transcript/files.js';
import {
  type TranscriptCursors,
  type TranscriptLine,
  TranscriptTail,
  type TranscriptTailOptions,
} from '../src/io/transcript/transcript.js';

const CWD = '/srv/agent';
const line = (n: number, extra = ''): string => `${JSON.stringify({ type: 'x', n, extra })}\n`;
const until = async (check: () => boolean, timeoutMs = 3000): Promise<void> => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(20);
  }
};

describe('TranscriptTail', () => {
  let root: string;
  let dir: string;
  let seen: TranscriptLine[];
  const tails: TranscriptTail[] = [];
  const ns = (source?: string): unknown[] =>
    seen.filter((l) => source === undefined || l.source === source).map((l) => l.value.n);
  /** A tail on session `s1` unless `sessionId: null` (none yet). */
  const make = (
    options: Omit<Partial<TranscriptTailOptions>, 'sessionId'> & { sessionId?: string | null } = {},
  ): TranscriptTail => {
    const { sessionId = 's1', ...rest } = options;
    const tail = new TranscriptTail({
      configDir: root,
      cwd: CWD,
      rescanMs: 60_000,
      onLine: (l) => seen.push(l),
      ...(sessionId !== null ? { sessionId } : {}),
      ...rest,
    });
    tails.push(tail);
    return tail;
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sy-tail-'));
    dir = projectDir(root, CWD);
    mkdirSync(dir, { recursive: true });
    seen = [];
  });
  afterEach(() => {
    for (const tail of tails.splice(0)) tail.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('hands over a line appended in pieces once, when its newline arrives', () => {
    const file = join(dir, 's1.jsonl');
    writeFileSync(file, line(1));
    const tail = make();
    tail.start();
    const [head, rest] = [line(2).slice(0, 7), line(2).slice(7)];
    appendFileSync(file, head);
    tail.rescan();
    expect(ns()).toEqual([1]);
    appendFileSync(file, rest.slice(0, -1));
    tail.rescan();
    expect(ns()).toEqual([1]);
    appendFileSync(file, `\n${line(3)}`);
    tail.rescan();
    tail.rescan();
    expect(ns()).toEqual([1, 2, 3]);
  });

  it('reads on fs.watch events, without waiting for the rescan', async () => {
    const file = join(dir, 's1.jsonl');
    writeFileSync(file, '');
    make().start();
    appendFileSync(file, line(1));
    await until(() => seen.length === 1);
    appendFileSync(file, line(2));
    await until(() => seen.length === 2);
    expect(ns()).toEqual([1, 2]);
  });

  it('reads a truncated file again from its start', () => {
    const file = join(dir, 's1.jsonl');
    writeFileSync(file, line(1, 'long enough to be longer than what replaces it') + line(2));
    const tail = make();
    tail.start();
    truncateSync(file, 0);
    appendFileSync(file, line(3));
    tail.rescan();
    expect(ns()).toEqual([1, 2, 3]);
  });

  it('after a truncation, a checkpoint names the new contents: a restart repeats nothing', () => {
    const file = join(dir, 's1.jsonl');
    writeFileSync(file, line(1, 'x'.repeat(300)) + line(2));
    const first = make();
    first.start();
    truncateSync(file, 0);
    appendFileSync(file, line(3));
    first.rescan();
    const cursors = first.checkpoint();
    first.stop();
    appendFileSync(file, line(4));
    make({ cursors }).start();
    expect(ns()).toEqual([1, 2, 3, 4]);
  });

  it('follows a rotation: the old file to its end, then the new one from its start', () => {
    const file = join(dir, 's1.jsonl');
    writeFileSync(file, line(1));
    const tail = make();
    tail.start();
    appendFileSync(file, line(2)); // written before the rotation, not yet read
    renameSync(file, join(dir, 'old.jsonl.bak'));
    // Bigger than the old cursor: a size check alone would start reading the new file mid-way.
    writeFileSync(file, line(3, 'x'.repeat(200)) + line(4));
    tail.rescan();
    tail.rescan();
    expect(ns()).toEqual([1, 2, 3, 4]);
    expect(tail.checkpoint()['s1.jsonl']?.offset).toBe(Buffer.byteLength(line(3, 'x'.repeat(200)) + line(4)));
  });

  it('after /clear: follows the new session file from its start and drains the old one, then lets it go', async () => {
    const old = join(dir, 's1.jsonl');
    writeFileSync(old, line(1));
    const tail = make({ drainMs: 150 });
    tail.start();
    writeFileSync(join(dir, 's2.jsonl'), line(10) + line(11));
    tail.follow('s2');
    // The CLI flushes in batches: the old session's last line lands after the switch.
    appendFileSync(old, line(2));
    tail.rescan();
    expect(ns()).toEqual([1, 10, 11, 2]);
    expect(tail.attached).toBe(2);
    await sleep(200);
    tail.rescan();
    expect(tail.attached).toBe(1);
    expect(Object.keys(tail.checkpoint())).toEqual(['s2.jsonl']);
    appendFileSync(old, line(3)); // never read: that session is over
    appendFileSync(join(dir, 's2.jsonl'), line(12));
    tail.rescan();
    expect(ns()).toEqual([1, 10, 11, 2, 12]);
  });

  it('reads sub-agent files from their start, releases idle ones and takes them up again when they grow', async () => {
    writeFileSync(join(dir, 's1.jsonl'), line(1));
    const sub = join(dir, 's1', 'subagents');
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, 'agent-a1.jsonl'), line(100) + line(101));
    const tail = make({ idleReleaseMs: 100 });
    tail.start();
    expect(ns('a1')).toEqual([100, 101]);
    expect(tail.attached).toBe(2);
    await sleep(150);
    tail.rescan();
    expect(tail.attached).toBe(1); // released: no watcher, no descriptor
    tail.rescan();
    expect(tail.attached).toBe(1); // unchanged: stays released
    expect(tail.checkpoint()['s1/subagents/agent-a1.jsonl']?.offset).toBe(
      Buffer.byteLength(line(100) + line(101)),
    );
    appendFileSync(join(sub, 'agent-a1.jsonl'), line(102));
    tail.rescan();
    expect(tail.attached).toBe(2);
    expect(ns('a1')).toEqual([100, 101, 102]);
    // The main file is never released for idleness.
    await sleep(150);
    tail.rescan();
    expect(tail.attached).toBe(1);
    expect(tail.checkpoint()['s1.jsonl']).toBeDefined();
  });

  it('resumes from a checkpoint taken inside onLine: nothing skipped, nothing repeated', () => {
    const file = join(dir, 's1.jsonl');
    const sub = join(dir, 's1', 'subagents');
    mkdirSync(sub, { recursive: true });
    writeFileSync(file, line(1) + line(2) + line(3));
    writeFileSync(join(sub, 'agent-b.jsonl'), line(50));
    // "Persisted" state: the handled lines and the cursors, saved together after each line.
    let saved: { handled: unknown[]; cursors: TranscriptCursors } = { handled: [], cursors: {} };
    const handled: unknown[] = [];
    let crashed = false;
    const first = make({
      onLine: (l) => {
        if (crashed) return; // the process is gone: nothing after line 2 was persisted
        handled.push(l.value.n);
        saved = { handled: [...handled], cursors: first.checkpoint() };
        if (l.value.n === 2) crashed = true;
      },
    });
    first.start();
    first.stop();
    expect(saved.handled).toEqual([1, 2]);
    // The CLI writes on while no bridge runs, including half a line.
    appendFileSync(file, line(4) + line(5).slice(0, 5));
    appendFileSync(join(sub, 'agent-b.jsonl'), line(51));
    const after: unknown[] = [...saved.handled];
    const second = make({ cursors: saved.cursors, onLine: (l) => after.push(l.value.n) });
    second.start();
    appendFileSync(file, line(5).slice(5));
    second.rescan();
    expect([...after].sort((a, b) => Number(a) - Number(b))).toEqual([1, 2, 3, 4, 5, 50, 51]);
    expect(new Set(after).size).toBe(after.length);
  });

  it('resumed with nothing new, still reads the old session’s last line written just before a follow()', () => {
    const old = join(dir, 's1.jsonl');
    writeFileSync(old, line(1));
    const first = make();
    first.start();
    const cursors = first.checkpoint();
    first.stop();
    seen = [];
    const second = make({ cursors });
    second.start();
    // `/clear`: its enqueue lands in the old file, and stdout names the new session at once.
    appendFileSync(old, line(2));
    writeFileSync(join(dir, 's2.jsonl'), line(10));
    second.follow('s2');
    expect(ns()).toEqual([2, 10]);
  });

  it('starts over at 0 when a persisted cursor names another inode (replaced while no tail ran)', () => {
    const file = join(dir, 's1.jsonl');
    writeFileSync(file, line(1) + line(2));
    const first = make();
    first.start();
    const cursors = first.checkpoint();
    first.stop();
    rmSync(file);
    writeFileSync(file, line(3) + line(4) + line(5));
    seen = [];
    make({ cursors }).start();
    expect(ns()).toEqual([3, 4, 5]);
  });

  it('reads only the backlog of an existing main file it meets for the first time', () => {
    const file = join(dir, 's1.jsonl');
    let text = '';
    for (let n = 1; n <= 100; n++) text += line(n);
    writeFileSync(file, text);
    // The cut lands inside a line: that partial line is not valid JSON and is passed over.
    make({ backlogBytes: Buffer.byteLength(line(99) + line(100)) + 5 }).start();
    expect(ns()).toEqual([99, 100]);
    seen = [];
    rmSync(file);
    writeFileSync(join(dir, 's1.jsonl'), text);
    make({ sessionId: 's1', backlogBytes: 0 }).start();
    expect(ns()).toEqual([]);
  });

  it('skips a line over the cap unparsed, and lines accept() rejects, moving past both', () => {
    const file = join(dir, 's1.jsonl');
    const skipped: number[] = [];
    writeFileSync(
      file,
      `${line(1)}${JSON.stringify({ big: 'y'.repeat(5000) })}\n${line(2)}${line(3, 'drop')}`,
    );
    const tail = make({
      maxLineBytes: 1000,
      onSkipped: (_file, bytes) => skipped.push(bytes),
      accept: (text) => !text.includes('drop'),
    });
    tail.start();
    expect(ns()).toEqual([1, 2]);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toBeGreaterThan(5000);
    expect(tail.checkpoint()['s1.jsonl']?.offset).toBe(
      Buffer.byteLength(
        `${line(1)}${JSON.stringify({ big: 'y'.repeat(5000) })}\n${line(2)}${line(3, 'drop')}`,
      ),
    );
  });

  it('passes over lines acceptBytes rejects before decoding them, and moves past them', () => {
    const file = join(dir, 's1.jsonl');
    writeFileSync(file, `${line(1)}${line(2, 'drop')}${line(3)}`);
    const tail = make({ acceptBytes: (bytes) => !bytes.includes('drop') });
    tail.start();
    expect(ns()).toEqual([1, 3]);
    appendFileSync(file, line(4));
    tail.rescan();
    expect(ns()).toEqual([1, 3, 4]);
  });

  it('waits for a session file that does not exist yet, and for a session id', () => {
    const tail = make({ sessionId: null });
    tail.start();
    writeFileSync(join(dir, 's9.jsonl'), line(1));
    tail.rescan();
    expect(ns()).toEqual([]);
    tail.follow('s9');
    expect(ns()).toEqual([1]);
  });
});
