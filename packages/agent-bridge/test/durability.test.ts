/**
 * The pieces that make restarts safe, without a CLI or a child process: the whole-line stdout reader,
 * the file outbox, process records. (The bridge's reports on bad binaries: tests/bridge/bad-binaries.)
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileChannelStore } from '../src/io/outbox/outbox.js';
import { liveness, readStartTime } from '../src/io/process/child.js';
import { StdoutReader } from '../src/io/process/stdout-reader.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-u-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('StdoutReader', () => {
  it('yields each line once however the writes are cut, mid-line or mid-character, and counts bytes', () => {
    const stream = '{"a":1}\n{"b":"café ☕"}\n{"c":3}\n';
    const bytes = Buffer.from(stream);
    for (const chunk of [1, 2, 3, 5, 7, 11, 1000]) {
      const path = join(tempDir(), 'out.log');
      writeFileSync(path, '');
      const reader = new StdoutReader(path, 0, 1024);
      const lines: string[] = [];
      for (let at = 0; at < bytes.length; at += chunk) {
        appendFileSync(path, bytes.subarray(at, Math.min(at + chunk, bytes.length)));
        for (const line of reader.read()) {
          lines.push(line.text ?? '');
          reader.advance(line.end);
        }
      }
      expect(lines).toEqual(['{"a":1}', '{"b":"café ☕"}', '{"c":3}']);
      expect(reader.offset).toBe(bytes.length);
      reader.close();
    }
  });

  it('skips a line over the cap without decoding it, and resumes from a persisted offset', () => {
    const path = join(tempDir(), 'out.log');
    const big = 'x'.repeat(3 * 1024 * 1024);
    writeFileSync(path, `{"a":1}\n${big}\n{"b":2}\n`);
    const reader = new StdoutReader(path, 0, 2 * 1024 * 1024);
    const lines = reader.read(64 * 1024 * 1024);
    expect(lines.map((l) => l.text)).toEqual(['{"a":1}', undefined, '{"b":2}']);
    expect(lines[1]?.bytes).toBe(big.length);
    const resumed = new StdoutReader(path, lines[1]?.end ?? 0, 2 * 1024 * 1024);
    expect(resumed.read().map((l) => l.text)).toEqual(['{"b":2}']);
  });
});

describe('FileChannelStore', () => {
  it('survives a reopen: numbering, pending frames, peer cursor and source tags; a torn last line is ignored', () => {
    const path = join(tempDir(), 'outbox.log');
    const store = new FileChannelStore(path);
    expect(
      store.append({ type: 'thinking', turnId: 't', text: 'a' }, { conversation: '', source: [1, 100, 0] }),
    ).toBe(1);
    expect(
      store.append({ type: 'thinking', turnId: 't', text: 'b' }, { conversation: '', source: 'in:x#0' }),
    ).toBe(2);
    store.append({ type: 'thinking', turnId: 't', text: 'c' });
    store.acknowledge(1);
    store.writePeer({ streamId: 'gw', lastSeen: 9 });
    store.close();
    appendFileSync(path, '{"a":4,"f":{"ty'); // a crash mid-write
    const again = new FileChannelStore(path);
    expect(again.streamId).toBe(store.streamId);
    expect(again.pendingAfter(0).map((p) => p.seq)).toEqual([2, 3]);
    expect(again.readPeer()).toEqual({ streamId: 'gw', lastSeen: 9 });
    expect(again.lastSource()).toEqual([1, 100, 0]);
    expect(again.lastInbound()).toBe('in:x#0');
    expect(again.append({ type: 'thinking', turnId: 't', text: 'd' })).toBe(4);
    again.compact();
    again.close();
    const compacted = new FileChannelStore(path);
    expect(compacted.pendingAfter(0).map((p) => p.seq)).toEqual([2, 3, 4]);
    expect(compacted.append({ type: 'thinking', turnId: 't', text: 'e' })).toBe(5);
    expect(compacted.lastSource()).toEqual([1, 100, 0]);
    compacted.close();
  });

  it('a lost log is a new stream, so the peer resets its duplicate filter', () => {
    const dir = tempDir();
    const first = new FileChannelStore(join(dir, 'a.log'));
    const second = new FileChannelStore(join(dir, 'b.log'));
    expect(first.streamId).not.toBe(second.streamId);
    first.close();
    second.close();
  });
});

describe('process records', () => {
  it('a live pid with another start time is dead (pid reuse); a missing pid is dead', () => {
    const mine = readStartTime(process.pid);
    if (!mine.ok) throw new Error('no /proc');
    expect(liveness({ pid: process.pid, startTime: mine.startTime, startedAt: 0 })).toBe('alive');
    expect(liveness({ pid: process.pid, startTime: '1', startedAt: 0 })).toBe('dead');
    expect(liveness({ pid: 2 ** 22 + 17, startTime: '1', startedAt: 0 })).toBe('dead');
  });
});
