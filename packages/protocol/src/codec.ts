/**
 * The byte format: each frame is a 4-byte big-endian length followed by that many bytes of msgpack.
 *
 * A length prefix (rather than msgpackr's self-delimiting stream) lets the reader refuse an oversized
 * frame before buffering it, tell a truncated frame from a slow one, and keep the stream in sync after
 * one body fails to decode. This is the only module that imports msgpackr.
 */
import { Packr } from 'msgpackr';

/** Default cap on one frame's body; a peer that announces more is cut off. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
const HEADER_BYTES = 4;

// Plain maps, no shared record structures: a frame must decode on its own, whichever connection carries it.
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false, int64AsType: 'number' });

/** Encodes one value as a complete frame (header and body). */
export function encodeFrame(value: unknown): Buffer {
  const body = packr.pack(value);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

export type DecodeEvent =
  | { kind: 'value'; value: unknown; bytes: number }
  | { kind: 'error'; code: 'bad_frame' | 'too_large'; message: string };

/**
 * Incremental reader. Feed it chunks as they arrive, in order; it returns the events the chunk
 * completed. After a `too_large` event the stream cannot be resynchronised and the decoder refuses
 * further input; a `bad_frame` body is skipped and decoding goes on (the caller decides whether to
 * keep the connection).
 */
export class FrameDecoder {
  readonly #maxFrameBytes: number;
  #chunks: Buffer[] = [];
  #buffered = 0;
  #failed = false;

  constructor(maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES) {
    this.#maxFrameBytes = maxFrameBytes;
  }

  /** Bytes held that do not yet make a whole frame (a non-zero value at end of stream means truncation). */
  get pendingBytes(): number {
    return this.#buffered;
  }

  push(chunk: Buffer): DecodeEvent[] {
    if (this.#failed) return [];
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
    }
    const events: DecodeEvent[] = [];
    while (this.#buffered >= HEADER_BYTES) {
      const head = this.#peekHeader();
      if (head > this.#maxFrameBytes) {
        this.#failed = true;
        this.#chunks = [];
        this.#buffered = 0;
        events.push({
          kind: 'error',
          code: 'too_large',
          message: `frame of ${head} bytes exceeds the limit of ${this.#maxFrameBytes} bytes`,
        });
        return events;
      }
      if (this.#buffered < HEADER_BYTES + head) break;
      const body = this.#take(HEADER_BYTES + head).subarray(HEADER_BYTES);
      if (head === 0) {
        events.push({ kind: 'error', code: 'bad_frame', message: 'empty frame body' });
        continue;
      }
      try {
        events.push({ kind: 'value', value: packr.unpack(body), bytes: head });
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        events.push({
          kind: 'error',
          code: 'bad_frame',
          message: `frame body is not valid msgpack: ${reason}`,
        });
      }
    }
    return events;
  }

  #peekHeader(): number {
    const first = this.#chunks[0] as Buffer;
    if (first.length >= HEADER_BYTES) return first.readUInt32BE(0);
    return this.#take(HEADER_BYTES, true).readUInt32BE(0);
  }

  /** Removes (or with `peek`, copies) the first `n` buffered bytes, joining chunks only when needed. */
  #take(n: number, peek = false): Buffer {
    const first = this.#chunks[0] as Buffer;
    if (first.length >= n) {
      if (peek) return first.subarray(0, n);
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      this.#buffered -= n;
      return first.subarray(0, n);
    }
    const joined = Buffer.concat(this.#chunks, this.#buffered);
    const out = joined.subarray(0, n);
    if (peek) {
      this.#chunks = [joined];
    } else {
      this.#chunks = joined.length > n ? [joined.subarray(n)] : [];
      this.#buffered -= n;
    }
    return out;
  }
}
