/**
 * The bridge's durable {@link ChannelStore}: an append-only log in the state directory, compacted when
 * most of it has been acknowledged.
 *
 * Format: one JSON record a line — `{"stream":id}` first, then `{"a":seq,"f":frame,"c":conv,"src":[g,o,i]}`
 * (a frame, with its conversation and source), `{"k":upTo}` (acknowledged), `{"p":cursor}` (peer cursor), `{"n":nextSeq}` (after a
 * compaction). `append` and `writePeer` fsync before returning (the store contract: durable on return);
 * acknowledgements do not, since losing one only means a resend the peer drops by number. A torn last
 * line (a crash mid-write) fails to parse and is ignored.
 *
 * Beyond the contract, each frame can carry a *source tag*: the stdout position that produced it
 * (process generation, line end offset, index within the line). After a crash the bridge re-reads stdout
 * from its last snapshot, and {@link FileChannelStore.lastSource} tells it which of the regenerated
 * frames the log already holds — that is how a frame reaches the gateway exactly once.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AppFrame, ChannelStore, PeerCursor, PendingFrame } from '@switchyard/protocol';

/** Where a frame came from: `[generation, stdout line end offset, index of the frame in that line]`. */
export type SourceTag = readonly [number, number, number];

/** Orders source tags; negative when `a` came first. */
export function compareSource(a: SourceTag, b: SourceTag): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

const COMPACT_AFTER_BYTES = 4 * 1024 * 1024;

/** A {@link ChannelStore} kept in a file; see the module comment for the format and guarantees. */
export class FileChannelStore implements ChannelStore {
  readonly path: string;
  #streamId: string;
  #nextSeq = 1;
  #pending: PendingFrame[] = [];
  #peer: PeerCursor | undefined;
  /** Per conversation: the newest stdout source tag and the newest inbound tag appended. */
  #last = new Map<string, { src?: SourceTag; in?: string }>();
  #source: SourceTag | string | undefined;
  #conversation = '';
  #fd: number;
  #bytes = 0;

  constructor(path: string) {
    this.path = path;
    this.#streamId = '';
    if (existsSync(path)) this.#load(readFileSync(path, 'utf8'));
    if (this.#streamId === '') {
      // No log (or an unreadable one): a new stream, so the peer resets its duplicate filter.
      this.#streamId = randomUUID();
      this.#pending = [];
      this.#nextSeq = 1;
      this.#rewrite();
    }
    this.#fd = openSync(path, 'a', 0o600);
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

  /**
   * Tags the frames appended until the next call: a stdout position, a command's key, or nothing, and
   * the conversation they belong to.
   */
  setSource(tag: SourceTag | string | undefined, conversation = ''): void {
    this.#source = tag;
    this.#conversation = conversation;
  }

  /**
   * Gives the tags recorded under conversation `from` to `to` (durably): how the single session of a
   * bridge from before conversations becomes the conversation of the chat it served.
   */
  renameConversation(from: string, to: string): void {
    const tags = this.#last.get(from);
    if (!tags) return;
    this.#last.delete(from);
    this.#last.set(to, tags);
    this.compact();
  }

  #tags(conversation: string): { src?: SourceTag; in?: string } {
    let tags = this.#last.get(conversation);
    if (!tags) {
      tags = {};
      this.#last.set(conversation, tags);
    }
    return tags;
  }

  append(frame: AppFrame): number {
    const seq = this.#nextSeq++;
    this.#pending.push({ seq, frame });
    const record: Record<string, unknown> = { a: seq, f: frame };
    if (this.#source !== undefined && this.#conversation !== '') record.c = this.#conversation;
    if (typeof this.#source === 'string') {
      record.in = this.#source;
      this.#tags(this.#conversation).in = this.#source;
    } else if (this.#source) {
      record.src = this.#source;
      this.#tags(this.#conversation).src = this.#source;
    }
    this.#write(record, true);
    return seq;
  }

  acknowledge(upTo: number): void {
    const first = this.#pending[0];
    if (!first || first.seq > upTo) return;
    this.#pending = this.#pending.filter((entry) => entry.seq > upTo);
    this.#write({ k: upTo }, false);
    if (this.#bytes > COMPACT_AFTER_BYTES) this.compact();
  }

  pendingAfter(after: number): PendingFrame[] {
    return this.#pending.filter((entry) => entry.seq > after);
  }

  readPeer(): PeerCursor | undefined {
    return this.#peer;
  }

  writePeer(cursor: PeerCursor): void {
    this.#peer = { streamId: cursor.streamId, lastSeen: cursor.lastSeen };
    this.#write({ p: this.#peer }, true);
  }

  /** Rewrites the log with only what is still needed. Atomic: a crash leaves the old or the new log. */
  compact(): void {
    closeSync(this.#fd);
    this.#rewrite();
    this.#fd = openSync(this.path, 'a', 0o600);
  }

  /** Closes the file; the store must not be used afterwards. */
  close(): void {
    closeSync(this.#fd);
  }

  #write(record: Record<string, unknown>, durable: boolean): void {
    const line = `${JSON.stringify(record)}\n`;
    this.#bytes += writeSync(this.#fd, line);
    if (durable) fsyncSync(this.#fd);
  }

  #rewrite(): void {
    const lines = [JSON.stringify({ stream: this.#streamId }), JSON.stringify({ n: this.#nextSeq })];
    if (this.#peer) lines.push(JSON.stringify({ p: this.#peer }));
    for (const [conversation, tags] of this.#last) {
      const record: Record<string, unknown> = conversation === '' ? {} : { c: conversation };
      if (tags.src) lines.push(JSON.stringify({ ...record, src: tags.src }));
      if (tags.in) lines.push(JSON.stringify({ ...record, in: tags.in }));
    }
    for (const entry of this.#pending) lines.push(JSON.stringify({ a: entry.seq, f: entry.frame }));
    const text = `${lines.join('\n')}\n`;
    writeFileAtomic(this.path, text);
    this.#bytes = Buffer.byteLength(text);
  }

  #load(text: string): void {
    const pending = new Map<number, PendingFrame>();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue; // a torn write at the end
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
    this.#pending = [...pending.values()].sort((a, b) => a.seq - b.seq);
    this.#bytes = Buffer.byteLength(text);
  }
}

/** Writes a file so that a crash leaves either the old content or the new: temp file, fsync, rename, fsync dir. */
export function writeFileAtomic(path: string, content: string): void {
  const tmp = join(dirname(path), `.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
