/**
 * The outbox's group commit, the bridge's one durable write per message: the frames a delivery
 * announces, the conversation's state and the peer cursor reach the log as one record with one fsync,
 * or not at all — whatever byte a crash cuts it at — and their socket writes wait for it.
 */
import { fsyncSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { initialSessionState } from '../src/core/session/state.js';
import { FileChannelStore } from '../src/io/outbox/outbox.js';
import { SNAPSHOT_FILE, SnapshotFile } from '../src/io/session/snapshot.js';
import { frame, tempDir, texts } from './outbox-fixtures.js';

const cursor = (lastSeen: number) => ({ streamId: 'gw', lastSeen });

/** A delivery's durable write: two frames, the conversation's state, the cursor. */
function deliveryGroup(store: FileChannelStore, n: number): void {
  store.group(() => {
    store.append(frame(`a${n}`), { conversation: 'c1', source: `in:m${n}#0` });
    store.append(frame(`b${n}`), { conversation: 'c1', source: `in:m${n}#1` });
    store.saveState('c1', JSON.stringify({ rev: n, intent: { key: `in:m${n}` } }));
    store.writePeer(cursor(n));
  });
}

describe('FileChannelStore.group', () => {
  it('runs `durable` once the record is written, then fsyncs, then the socket writes that waited for it (the line goes into the CLI first, the frames it announces leave only once synced)', () => {
    const path = join(tempDir('sy-og-'), 'outbox.log');
    const order: string[] = [];
    const store = new FileChannelStore(path, {
      fsync: (fd) => {
        order.push('fsync');
        fsyncSync(fd);
      },
    });
    order.length = 0;
    store.group(
      () => {
        store.append(frame('announced'), { conversation: 'c1', source: 'in:m1#0' });
        store.whenDurable(() => order.push('socket'));
        // A nested group's `durable` waits for the outer group's record too.
        store.group(
          () => {},
          () => order.push('nested durable'),
        );
        expect(order).toEqual([]);
      },
      () => {
        // Another process (a restarted bridge) reads the record already, before any fsync.
        const reloaded = new FileChannelStore(path);
        order.push(`durable, the log holding ${texts(reloaded).length} frame`);
        reloaded.close();
      },
    );
    expect(order).toEqual(['durable, the log holding 1 frame', 'nested durable', 'fsync', 'socket']);
    // Without a `durable` step the group is synced before anything waits on it, as a single append is.
    order.length = 0;
    store.group(() => {
      store.append(frame('plain'));
      store.whenDurable(() => order.push('socket'));
    });
    expect(order).toEqual(['fsync', 'socket']);
    store.close();
  });

  it('an fsync that fails after the line went in is reported, and the group stands: kept in memory, in the file, and its frames still go out', () => {
    const path = join(tempDir('sy-og-'), 'outbox.log');
    const late: unknown[] = [];
    let failing = false;
    const store = new FileChannelStore(path, {
      fsync: (fd) => {
        if (failing) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
        fsyncSync(fd);
      },
      onLateSyncFailure: (err) => late.push(err),
    });
    failing = true;
    const events: string[] = [];
    store.group(
      () => {
        store.append(frame('kept'), { conversation: 'c1', source: 'in:m1#0' });
        store.writePeer(cursor(4));
        store.whenDurable((failed) =>
          events.push(failed === undefined ? 'socket' : 'socket told of failure'),
        );
      },
      () => events.push('line written'),
    );
    expect(events).toEqual(['line written', 'socket']);
    expect(late.map((e) => (e as Error).message)).toEqual(['EIO: i/o error, fsync']);
    expect(texts(store)).toEqual([[1, 'kept']]);
    expect(store.readPeer()).toEqual(cursor(4));
    store.close();
    const reloaded = new FileChannelStore(path);
    expect(texts(reloaded)).toEqual([[1, 'kept']]);
    reloaded.close();
    // Before the line, a failing fsync still takes the group back whole (a single append here).
    const again = new FileChannelStore(path, {
      fsync: () => {
        throw new Error('EIO');
      },
    });
    expect(() => again.append(frame('lost'))).toThrow('EIO');
    expect(texts(again)).toEqual([[1, 'kept']]);
    again.close();
  });

  it('writes one record for the whole group, and a reload has all of it', () => {
    const path = join(tempDir('sy-og-'), 'outbox.log');
    const store = new FileChannelStore(path);
    const before = readFileSync(path).toString().split('\n').length;
    deliveryGroup(store, 1);
    expect(readFileSync(path).toString().split('\n').length).toBe(before + 1);
    store.close();
    const again = new FileChannelStore(path);
    expect(texts(again)).toEqual([
      [1, 'a1'],
      [2, 'b1'],
    ]);
    expect(again.stateOf('c1')).toBe(JSON.stringify({ rev: 1, intent: { key: 'in:m1' } }));
    expect(again.readPeer()).toEqual(cursor(1));
    expect(again.lastInbound('c1')).toBe('in:m1#1');
    again.close();
  });

  it('cut at every byte of the group record: a reload has all of the group or none of it', () => {
    const dir = tempDir('sy-og-');
    const path = join(dir, 'outbox.log');
    const store = new FileChannelStore(path);
    deliveryGroup(store, 1);
    const whole = statSync(path).size;
    deliveryGroup(store, 2);
    store.close();
    const bytes = readFileSync(path);
    for (let cut = whole; cut < bytes.length; cut++) {
      const copy = join(dir, `cut-${cut}.log`);
      writeFileSync(copy, bytes.subarray(0, cut));
      const reloaded = new FileChannelStore(copy);
      expect(texts(reloaded), `cut at ${cut}`).toEqual([
        [1, 'a1'],
        [2, 'b1'],
      ]);
      expect(reloaded.readPeer(), `cut at ${cut}`).toEqual(cursor(1));
      expect(reloaded.stateOf('c1'), `cut at ${cut}`).toContain('"rev":1');
      reloaded.close();
      rmSync(copy);
    }
  });

  it('holds the socket writes of its frames until the group is on disk, and reports a failed group to them', () => {
    const path = join(tempDir('sy-og-'), 'outbox.log');
    const store = new FileChannelStore(path);
    const events: string[] = [];
    store.group(() => {
      store.append(frame('x'));
      store.whenDurable((failed) => events.push(failed === undefined ? 'written' : 'failed'));
      events.push(`inside, ${readFileSync(path).toString().includes('"x"') ? 'on disk' : 'not on disk'}`);
    });
    expect(events).toEqual(['inside, not on disk', 'written']);
    expect(readFileSync(path).toString()).toContain('"x"');

    expect(() =>
      store.group(() => {
        store.append(frame('y'));
        store.saveState('c1', '{}');
        store.writePeer(cursor(9));
        store.whenDurable((failed) => events.push(failed === undefined ? 'written' : 'failed'));
        throw new Error('the work failed');
      }),
    ).toThrow('the work failed');
    expect(events.at(-1)).toBe('failed');
    // Nothing of the failed group, in memory or on disk; numbering goes on where it was.
    expect(texts(store)).toEqual([[1, 'x']]);
    expect([store.stateOf('c1'), store.readPeer()]).toEqual([undefined, undefined]);
    expect(store.append(frame('z'))).toBe(2);
    store.close();
  });

  it('keeps the newest state per conversation and the cursor through a compaction', () => {
    const path = join(tempDir('sy-og-'), 'outbox.log');
    const store = new FileChannelStore(path);
    for (let n = 1; n <= 3; n++) deliveryGroup(store, n);
    store.acknowledge(6);
    store.compact();
    store.close();
    const again = new FileChannelStore(path);
    expect(again.stateOf('c1')).toContain('"rev":3');
    expect(again.readPeer()).toEqual(cursor(3));
    expect(again.pendingAfter(0)).toEqual([]);
    expect(again.append(frame('next'))).toBe(7);
    again.close();
  });

  it('drops a state its owner says is held newer elsewhere at the next compaction', () => {
    const path = join(tempDir('sy-og-'), 'outbox.log');
    const store = new FileChannelStore(path);
    deliveryGroup(store, 1);
    store.forgetState('c1');
    expect(store.stateOf('c1')).toBeUndefined();
    store.compact();
    expect(readFileSync(path).toString()).not.toContain('"s":');
    store.close();
  });

  it('writes nothing for a cursor it already holds durably (the channel stores it again after the handler)', () => {
    const path = join(tempDir('sy-og-'), 'outbox.log');
    const store = new FileChannelStore(path);
    deliveryGroup(store, 1);
    const size = statSync(path).size;
    store.writePeer(cursor(1));
    expect(statSync(path).size).toBe(size);
    store.writePeer(cursor(2));
    expect(statSync(path).size).toBeGreaterThan(size);
    store.close();
  });
});

describe('SnapshotFile.load: bridge.json with the log’s newer state laid over it', () => {
  const state = (rev: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ rev, delivered: [`in:m${rev}`], stdoutOffset: rev * 100, ...extra });
  const fileSnapshot = (rev: number, child: boolean) => ({
    version: 1,
    rev,
    stdoutOffset: 10,
    session: initialSessionState(),
    delivered: ['in:m0'],
    exits: [5],
    ...(child ? { child: { pid: 1, startTime: '1', startedAt: 1 } } : {}),
  });
  const load = (file: object | undefined, logged: string | undefined) => {
    const dir = tempDir('sy-og-');
    if (file) writeFileSync(join(dir, SNAPSHOT_FILE), JSON.stringify(file));
    const store = { stateOf: () => logged, saveState: () => {}, forgetState: () => {} };
    return new SnapshotFile(dir, new ManualClock(0), () => {}, { store, conversation: 'c1' }).load();
  };

  it('takes the log’s state when it is newer, but the process record and exits from the file', () => {
    const merged = load(fileSnapshot(1, true), state(2, { child: 'never from the log' }));
    expect([merged.rev, merged.delivered, merged.stdoutOffset]).toEqual([2, ['in:m2'], 200]);
    expect([merged.child?.pid, merged.exits]).toEqual([1, [5]]);
  });

  it('a record `stop.ts` removed from the file stays removed', () => {
    const merged = load(fileSnapshot(1, false), state(2));
    expect(merged.child).toBeUndefined();
    expect(merged.delivered).toEqual(['in:m2']);
  });

  it('keeps the file when it is as new or newer', () => {
    const merged = load(fileSnapshot(3, true), state(2));
    expect([merged.rev, merged.delivered]).toEqual([3, ['in:m0']]);
  });
});
