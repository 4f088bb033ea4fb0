/**
 * The file outbox's records are whole or absent: a write torn at any byte is cut off at load, so the
 * next append neither glues onto the fragment nor loses a frame, and numbers continue without reuse of
 * anything the gateway may have seen.
 */
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FrameSink } from '../src/io/outbox/frame-sink.js';
import { FileChannelStore } from '../src/io/outbox/outbox.js';
import { frame, tempDir, texts } from './outbox-fixtures.js';

/** A log with frames 1–3 (1 acknowledged) and a peer cursor; returns its size before `last` is written. */
function writeLog(
  path: string,
  last: (store: FileChannelStore) => void,
): { before: number; streamId: string } {
  const store = new FileChannelStore(path);
  store.append(frame('one'), { conversation: '', source: [1, 10, 0] });
  store.append(frame('two'), { conversation: '', source: [1, 20, 0] });
  store.append(frame('three'));
  store.acknowledge(1);
  store.writePeer({ streamId: 'gw', lastSeen: 7 });
  const before = statSync(path).size;
  last(store);
  store.close();
  return { before, streamId: store.streamId };
}

describe('FileChannelStore torn tail', () => {
  it('cut at every byte of a last appended frame: the next append takes its number, and a reload has exactly the frames', () => {
    const dir = tempDir();
    const original = join(dir, 'original.log');
    const { before, streamId } = writeLog(original, (store) => {
      // over 4 KB, with multi-byte characters
      store.append(frame(`four ${'é'.repeat(2_100)}`), { conversation: '', source: [2, 5, 0] });
    });
    const bytes = readFileSync(original);
    expect(bytes.length - before).toBeGreaterThan(4096);
    const path = join(dir, 'cut.log');
    for (let cut = before; cut < bytes.length; cut++) {
      writeFileSync(path, bytes.subarray(0, cut));
      const opened = new FileChannelStore(path);
      expect(opened.streamId, `cut at ${cut}`).toBe(streamId);
      expect(texts(opened), `cut at ${cut}`).toEqual([
        [2, 'two'],
        [3, 'three'],
      ]);
      expect(opened.lastSource(), `cut at ${cut}`).toEqual([1, 20, 0]);
      expect(opened.append(frame('new')), `cut at ${cut}`).toBe(4);
      opened.close();
      const reloaded = new FileChannelStore(path);
      expect(texts(reloaded), `cut at ${cut}`).toEqual([
        [2, 'two'],
        [3, 'three'],
        [4, 'new'],
      ]);
      expect(reloaded.readPeer()).toEqual({ streamId: 'gw', lastSeen: 7 });
      expect(reloaded.append(frame('after')), `cut at ${cut}`).toBe(5);
      reloaded.close();
    }
    // Uncut, the last frame is whole and keeps its number.
    writeFileSync(path, bytes);
    const whole = new FileChannelStore(path);
    expect(texts(whole).map(([seq]) => seq)).toEqual([2, 3, 4]);
    expect(whole.lastSource()).toEqual([2, 5, 0]);
    expect(whole.append(frame('new'))).toBe(5);
    whole.close();
  });

  it('cut at every byte of a last peer cursor: the previous cursor holds, and the next write is whole', () => {
    const dir = tempDir();
    const original = join(dir, 'original.log');
    const { before } = writeLog(original, (store) => store.writePeer({ streamId: 'gw', lastSeen: 8 }));
    const bytes = readFileSync(original);
    const path = join(dir, 'cut.log');
    for (let cut = before; cut < bytes.length; cut++) {
      writeFileSync(path, bytes.subarray(0, cut));
      const opened = new FileChannelStore(path);
      expect(opened.readPeer(), `cut at ${cut}`).toEqual({ streamId: 'gw', lastSeen: 7 });
      opened.writePeer({ streamId: 'gw', lastSeen: 9 });
      opened.close();
      const reloaded = new FileChannelStore(path);
      expect(reloaded.readPeer(), `cut at ${cut}`).toEqual({ streamId: 'gw', lastSeen: 9 });
      expect(texts(reloaded).map(([seq]) => seq)).toEqual([2, 3]);
      reloaded.close();
    }
  });

  it('cuts off a tail of zeros (a power loss that extended the file) and of a record without its newline', () => {
    const path = join(tempDir(), 'outbox.log');
    writeLog(path, () => {});
    appendFileSync(path, Buffer.alloc(8192));
    const opened = new FileChannelStore(path);
    expect(opened.append(frame('four'))).toBe(4);
    opened.close();
    const reloaded = new FileChannelStore(path);
    expect(texts(reloaded).map(([seq]) => seq)).toEqual([2, 3, 4]);
    reloaded.close();
  });

  it('refuses a log damaged before its end, saying what to do', () => {
    const path = join(tempDir(), 'outbox.log');
    writeLog(path, (store) => store.append(frame('four')));
    const bytes = readFileSync(path);
    const lines = bytes.toString('utf8').split('\n');
    lines[3] = lines[3]?.replace('two', 'twx') ?? ''; // checksum no longer matches
    writeFileSync(path, lines.join('\n'));
    expect(() => new FileChannelStore(path)).toThrow(/is damaged at byte \d+.*move the file away/);
  });
});

describe('FileChannelStore origins', () => {
  it('keeps a frame’s origin with that frame only: a frame sent without one (a pool notice) is never tagged', () => {
    const path = join(tempDir(), 'outbox.log');
    const store = new FileChannelStore(path);
    // The endpoint as the channel is: a reliable frame goes to the store with its origin, in one call.
    const endpoint = {
      send: (
        f: Parameters<FileChannelStore['append']>[0],
        origin?: Parameters<FileChannelStore['append']>[1],
      ) => {
        store.append(f, origin);
        return Promise.resolve();
      },
    };
    const log = { info() {}, warn() {}, error() {}, debug() {}, child: () => log } as never;
    const sink = new FrameSink(endpoint, store, log, 'c1');
    sink.emit([frame('from stdout')], () => [1, 10, 0]);
    // Between two of the sink's frames, the pool sends one of its own (no origin) straight to the channel.
    endpoint.send(frame('pool notice'));
    sink.emit([frame('from a command')], undefined, { key: 'in:m', from: 0 });
    store.close();
    const records = readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"a":'))
      .map(
        (line) =>
          JSON.parse(line.slice(9)) as { f: { text: string }; c?: string; src?: unknown; in?: string },
      );
    expect(records.map((r) => [r.f.text, r.c, r.src, r.in])).toEqual([
      ['from stdout', 'c1', [1, 10, 0], undefined],
      ['pool notice', undefined, undefined, undefined],
      ['from a command', 'c1', undefined, 'in:m#0'],
    ]);
    const again = new FileChannelStore(path);
    expect(again.lastSource('c1')).toEqual([1, 10, 0]);
    expect(again.lastInbound('c1')).toBe('in:m#0');
    expect(again.lastSource('')).toBeUndefined();
    again.close();
  });
});
