/**
 * The bridge's durable {@link ChannelStore}: an append-only log in the state directory, compacted when
 * most of it has been acknowledged. The log's format, its group records, its torn-tail recovery and its
 * compaction are one crash-safety argument, read in one place.
 *
 * Format: one record a line, `<crc32 of the JSON, 8 hex digits> <JSON>\n`. The records are
 * `{"stream":id,"v":2}` first, then `{"a":seq,"f":frame,"c":conversation,"src":[g,o,i]}` (a frame, with the
 * conversation and position that produced it), `{"k":upTo}` (acknowledged), `{"p":cursor}` (peer cursor),
 * `{"n":nextSeq}` (after a compaction), `{"c":conversation,"s":state}` (a conversation's durable state saved
 * with a delivery, see `snapshot.ts`; the newest per conversation is kept), and `{"g":[records]}` (a group:
 * the records of one {@link FileChannelStore.group}, whole or not at all). JSON never holds a raw newline, so
 * a record is whole exactly when its line ends in `\n` and its checksum matches.
 *
 * Invariants:
 * - `append` and `writePeer` fsync before returning (the store contract: durable on return);
 *   acknowledgements do not, since losing one only means a resend the peer drops by number.
 * - Inside {@link FileChannelStore.group} every record waits for the group's end and is written as one
 *   record with one fsync; the endpoint writes the group's frames to the socket only after that
 *   (`whenDurable`). This is the bridge's one durable write per message: the frames a delivery announces,
 *   the conversation's state with its intent, and the peer cursor of the gateway frame that caused it.
 *   Its `durable` step (the line into the CLI, `delivery.ts`) runs once the record is written, before
 *   the fsync: a killed bridge reads the written record all the same, and the fsync (which guards only
 *   against the machine going down, as the gateway's SQLite in WAL `NORMAL` does not) would cost the
 *   line 1–3 ms. The socket writes, the acknowledgement among them, still wait for the fsync; one that
 *   fails after the line went in is reported (`onLateSyncFailure`) and the group stands.
 * - `writePeer` of the cursor already held durably writes nothing (the channel stores the cursor after
 *   every handler; a handler that stored it in its group has done so).
 * - The file always ends on a whole record when it is appended to. A crash mid-write leaves a torn tail
 *   (a record cut short, or zeros): loading truncates the file to its last whole record, so the next
 *   append never glues onto a fragment. The torn record's `append` never returned, so its frame was
 *   never sent, and its number is free again. A write that fails at run time is truncated away before
 *   the error is thrown, and the memory state is left as it was.
 * - A bad record followed by good ones is not a torn tail but damage: loading refuses it, saying what to
 *   do, rather than guess which frames were lost.
 *
 * Beyond the contract, each frame can carry a *source tag*: the stdout position that produced it
 * (process generation, line end offset, index within the line). After a crash the bridge re-reads stdout
 * from its last snapshot, and {@link FileChannelStore.lastSource} tells it which of the regenerated
 * frames the log already holds — that is how a frame reaches the gateway exactly once.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { AppFrame, ChannelStore, FrameOrigin, PeerCursor, PendingFrame } from '@switchyard/protocol';
import { writeFileAtomic } from './atomic-file.js';
import {
  decodeRecord,
  encodeRecord,
  FORMAT_VERSION,
  type LogRecord,
  NEWLINE,
  type SourceTag,
} from './log-record.js';

const COMPACT_AFTER_BYTES = 4 * 1024 * 1024;

/** Options of {@link FileChannelStore}. */
export interface ChannelStoreOptions {
  /** How a write is made durable; default `fsyncSync`. Tests pass one that fails, or counts. */
  fsync?: (fd: number) => void;
  /**
   * Told when a group's fsync fails after its line went to the CLI: the record is kept (the page cache
   * outlives the process), but a machine crash now could lose it. Default: nothing.
   */
  onLateSyncFailure?: (err: unknown) => void;
}

/** A group's records, and what runs once they are written: `durable` first, then the socket writes. */
interface Batch {
  records: LogRecord[];
  waiting: ((failed?: unknown) => void)[];
  durable: (() => void)[];
}

/** A {@link ChannelStore} kept in a file; see the module comment for the format and guarantees. */
export class FileChannelStore implements ChannelStore {
  readonly path: string;
  #streamId: string;
  #nextSeq = 1;
  #pending: PendingFrame[] = [];
  #peer: PeerCursor | undefined;
  /** Per conversation: the newest stdout source tag and the newest inbound tag appended. */
  #last = new Map<string, { src?: SourceTag; in?: string }>();
  #fd: number;
  /** The file's length: where the next record starts. */
  #bytes = 0;
  /**
   * Per conversation: its newest state saved here, as the JSON text it was saved as (a copy: the caller
   * goes on changing its objects). Opaque to the store; `snapshot.ts` owns its shape.
   */
  #states = new Map<string, string>();
  /** Inside {@link group}: the records waiting for its one write, and what runs once it is done. */
  #batch: Batch | undefined;

  readonly #fsync: (fd: number) => void;
  readonly #onLateSyncFailure: (err: unknown) => void;

  /** Opens (or creates) the log; repairs a torn tail, refuses a damaged log. */
  constructor(path: string, options: ChannelStoreOptions = {}) {
    this.path = path;
    this.#fsync = options.fsync ?? fsyncSync;
    this.#onLateSyncFailure = options.onLateSyncFailure ?? (() => {});
    this.#streamId = '';
    const existing = existsSync(path) ? readFileSync(path) : undefined;
    let rewrite = false;
    if (existing) this.#load(existing);
    if (this.#streamId === '') {
      // No log (or nothing whole in it): a new stream, so the peer resets its duplicate filter.
      this.#streamId = randomUUID();
      this.#pending = [];
      this.#nextSeq = 1;
      rewrite = true;
    }
    if (rewrite) this.#bytes = this.#rewrite();
    this.#fd = openSync(path, 'a', 0o600);
    if (!rewrite && existing && this.#bytes < existing.length) {
      // The torn tail goes before anything is appended after it.
      ftruncateSync(this.#fd, this.#bytes);
      fsyncSync(this.#fd);
    }
  }

  get streamId(): string {
    return this.#streamId;
  }

  /** The newest source tag of any frame this conversation appended (survives compaction). */
  lastSource(conversation = ''): SourceTag | undefined {
    return this.#last.get(conversation)?.src;
  }

  /** The conversation's newest string tag (frames produced by a gateway command, `<key>#<index>`). */
  lastInbound(conversation = ''): string | undefined {
    return this.#last.get(conversation)?.in;
  }

  #tags(conversation: string): { src?: SourceTag; in?: string } {
    let tags = this.#last.get(conversation);
    if (!tags) {
      tags = {};
      this.#last.set(conversation, tags);
    }
    return tags;
  }

  /** Appends `frame` (durably) with its origin: the conversation and source tag that produced it. */
  append(frame: AppFrame, origin?: FrameOrigin): number {
    const seq = this.#nextSeq;
    const record: LogRecord = { a: seq, f: frame };
    const source = origin?.source as SourceTag | string | undefined;
    const conversation = origin?.conversation ?? '';
    if (source !== undefined && conversation !== '') record.c = conversation;
    if (typeof source === 'string') record.in = source;
    else if (source) record.src = source;
    this.#write(record, true);
    this.#nextSeq++;
    this.#pending.push({ seq, frame });
    if (typeof source === 'string') this.#tags(conversation).in = source;
    else if (source) this.#tags(conversation).src = source;
    return seq;
  }

  /** The conversation's newest state saved with {@link saveState} (its JSON text), if any. */
  stateOf(conversation: string): string | undefined {
    return this.#states.get(conversation);
  }

  /** Saves a conversation's state, as JSON text; durable on return, or with its group. */
  saveState(conversation: string, json: string): void {
    this.#write({ c: conversation, s: json }, true);
    this.#states.set(conversation, json);
  }

  /**
   * The conversation's state is held newer elsewhere (its `bridge.json` caught up): the next compaction
   * leaves it out. Writes nothing: until then a reload finds the older state, and its owner ignores it.
   */
  forgetState(conversation: string): void {
    this.#states.delete(conversation);
  }

  /**
   * Runs `work`; every record it writes (appends, intents, the peer cursor) reaches the log as one
   * record with one fsync when it returns, or — if it or the write throws — not at all, with the
   * memory state as before and the waiting socket writes told of the failure. Inside a group another
   * group is part of it. `durable` (the line into the CLI) runs once the record is written, before its
   * fsync (see the module comment) and the socket writes; it must not throw. Without one, the group is
   * fsynced before anything waiting on it runs, and a failed fsync takes it back whole.
   */
  group<T>(work: () => T, durable?: () => void): T {
    if (this.#batch) {
      const result = work();
      if (durable) this.#batch.durable.push(durable);
      return result;
    }
    const before = {
      nextSeq: this.#nextSeq,
      pending: this.#pending.length,
      peer: this.#peer,
      last: new Map([...this.#last].map(([key, tags]) => [key, { ...tags }])),
      states: new Map(this.#states),
    };
    const batch: Batch = { records: [], waiting: [], durable: durable ? [durable] : [] };
    this.#batch = batch;
    let result: T;
    try {
      result = work();
      this.#batch = undefined;
      // With a `durable` step, the fsync waits until that step has run (see the module comment).
      if (batch.records.length > 0) this.#write({ g: batch.records }, batch.durable.length === 0);
    } catch (err) {
      this.#batch = undefined;
      this.#nextSeq = before.nextSeq;
      this.#pending.length = before.pending;
      this.#peer = before.peer;
      this.#last = before.last;
      this.#states = before.states;
      for (const write of batch.waiting) write(err);
      throw err;
    }
    for (const done of batch.durable) done();
    if (batch.durable.length > 0 && batch.records.length > 0) {
      try {
        this.#fsync(this.#fd);
      } catch (err) {
        this.#onLateSyncFailure(err);
      }
    }
    for (const write of batch.waiting) write();
    return result;
  }

  whenDurable(write: (failed?: unknown) => void): void {
    if (this.#batch) this.#batch.waiting.push(write);
    else write();
  }

  acknowledge(upTo: number): void {
    const first = this.#pending[0];
    if (!first || first.seq > upTo) return;
    this.#write({ k: upTo }, false);
    this.#pending = this.#pending.filter((entry) => entry.seq > upTo);
    if (this.#bytes > COMPACT_AFTER_BYTES) {
      try {
        this.compact();
      } catch {
        // Compaction only saves space: a full disk leaves the log as it was, tried again at the next ack.
      }
    }
  }

  pendingAfter(after: number): PendingFrame[] {
    return this.#pending.filter((entry) => entry.seq > after);
  }

  readPeer(): PeerCursor | undefined {
    return this.#peer;
  }

  writePeer(cursor: PeerCursor): void {
    const held = this.#peer;
    if (!this.#batch && held?.streamId === cursor.streamId && held.lastSeen === cursor.lastSeen) return;
    const peer = { streamId: cursor.streamId, lastSeen: cursor.lastSeen };
    this.#write({ p: peer }, true);
    this.#peer = peer;
  }

  /**
   * Rewrites the log with only what is still needed. Atomic: a crash leaves the old or the new log. A
   * failure (a full disk) leaves the store appending to the old log, as before the call, and throws.
   */
  compact(): void {
    const bytes = this.#rewrite();
    // The new file is in place; the old descriptor now points at the replaced one.
    const fd = openSync(this.path, 'a', 0o600);
    closeSync(this.#fd);
    this.#fd = fd;
    this.#bytes = bytes;
  }

  /** Closes the file; the store must not be used afterwards. */
  close(): void {
    closeSync(this.#fd);
  }

  /** Appends one whole record, or none: a failed or short write is cut off again before throwing. */
  #write(record: LogRecord, durable: boolean): void {
    if (this.#batch) {
      this.#batch.records.push(record);
      return;
    }
    const line = encodeRecord(record);
    try {
      const written = writeSync(this.#fd, line);
      if (written !== line.length) throw new Error(`short write: ${written} of ${line.length} bytes`);
      if (durable) this.#fsync(this.#fd);
    } catch (err) {
      try {
        ftruncateSync(this.#fd, this.#bytes);
      } catch {
        // The next load truncates the torn record instead.
      }
      throw err;
    }
    this.#bytes += line.length;
  }

  /** Writes the log anew (atomically) from memory; returns its length. */
  #rewrite(): number {
    const records: LogRecord[] = [{ stream: this.#streamId, v: FORMAT_VERSION }, { n: this.#nextSeq }];
    if (this.#peer) records.push({ p: this.#peer });
    for (const [conversation, tags] of this.#last) {
      const owner: LogRecord = conversation === '' ? {} : { c: conversation };
      if (tags.src) records.push({ ...owner, src: tags.src });
      if (tags.in) records.push({ ...owner, in: tags.in });
    }
    for (const entry of this.#pending) records.push({ a: entry.seq, f: entry.frame });
    for (const [conversation, state] of this.#states) records.push({ c: conversation, s: state });
    const content = Buffer.concat(records.map(encodeRecord));
    writeFileAtomic(this.path, content);
    return content.length;
  }

  #load(bytes: Buffer): void {
    const pending = new Map<number, PendingFrame>();
    let offset = 0;
    let damagedAt: number | undefined;
    while (offset < bytes.length) {
      const end = bytes.indexOf(NEWLINE, offset);
      if (end < 0) break; // a torn tail: no whole record after `offset`
      const record = decodeRecord(bytes.subarray(offset, end));
      if (record === undefined) {
        damagedAt ??= offset;
      } else {
        if (damagedAt !== undefined) {
          throw new Error(
            `${this.path} is damaged at byte ${damagedAt} (a bad record before good ones), so the frames it ` +
              'holds cannot be trusted: stop the bridge, move the file away (the bridge then starts a new ' +
              'stream, and frames not yet delivered are lost), and start it again',
          );
        }
        this.#apply(record, pending);
        this.#bytes = end + 1;
      }
      offset = end + 1;
    }
    this.#pending = [...pending.values()].sort((a, b) => a.seq - b.seq);
  }

  #apply(record: LogRecord, pending: Map<number, PendingFrame>): void {
    if (Array.isArray(record.g)) {
      for (const part of record.g as LogRecord[]) this.#apply(part, pending);
      return;
    }
    if (typeof record.s === 'string' && typeof record.c === 'string') {
      this.#states.set(record.c, record.s);
      return;
    }
    if (typeof record.stream === 'string') this.#streamId = record.stream;
    if (typeof record.n === 'number') this.#nextSeq = Math.max(this.#nextSeq, record.n);
    if (typeof record.a === 'number') {
      pending.set(record.a, { seq: record.a, frame: record.f as AppFrame });
      this.#nextSeq = Math.max(this.#nextSeq, record.a + 1);
    }
    const conversation = typeof record.c === 'string' ? record.c : '';
    if (Array.isArray(record.src)) this.#tags(conversation).src = record.src as unknown as SourceTag;
    if (typeof record.in === 'string') this.#tags(conversation).in = record.in;
    if (typeof record.k === 'number') {
      for (const seq of pending.keys()) if (seq <= record.k) pending.delete(seq);
    }
    if (typeof record.p === 'object' && record.p !== null) this.#peer = record.p as PeerCursor;
  }
}
