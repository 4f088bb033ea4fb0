/**
 * The byte format: each frame is a 4-byte big-endian length followed by that many bytes of msgpack.
 *
 * A length prefix (rather than msgpackr's self-delimiting stream) lets the reader refuse an oversized
 * frame before buffering it, tell a truncated frame from a slow one, and keep the stream in sync after
 * one body fails to decode. This is the only module that imports msgpackr.
 */
import { Packr, RESERVE_START_SPACE } from 'msgpackr';

/** Default cap on one frame's body; a peer that announces more is cut off. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
const HEADER_BYTES = 4;

// Plain maps, no shared record structures: a frame must decode on its own, whichever connection carries it.
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false, int64AsType: 'number' });

/**
 * Encodes one value as a complete frame (header and body). msgpackr writes the body after four reserved
 * bytes of its own buffer, so the frame is made without a copy; the returned slice is never reused by
 * msgpackr (it continues after it), so it may be handed to a socket as is.
 */
export function encodeFrame(value: unknown): Buffer {
  const frame = packr.pack(value, RESERVE_START_SPACE | HEADER_BYTES) as Buffer;
  frame.writeUInt32BE(frame.length - HEADER_BYTES, 0);
  return frame;
}

/** What the decoder makes of the bytes: a decoded value, or a refusal naming what was wrong. */
export type DecodeEvent =
  | { kind: 'value'; value: unknown; bytes: number }
  | { kind: 'error'; code: 'bad_frame' | 'too_large'; message: string };

/**
 * Incremental reader. Feed it chunks as they arrive, in order; it returns the events the chunk
 * completed. After a `too_large` event the stream cannot be resynchronised and the decoder refuses
 * further input; a `bad_frame` body is skipped and decoding goes on (the caller decides whether to
 * keep the connection).
 *
 * Frames wholly inside a chunk are decoded in place; a frame split across chunks is gathered into one
 * buffer of its announced size, so a large frame costs one copy however many chunks carry it.
 */
export class FrameDecoder {
  readonly #maxFrameBytes: number;
  /** Bytes of a header split across chunks. */
  #head = Buffer.alloc(HEADER_BYTES);
  #headFilled = 0;
  /** The body of a frame split across chunks, and how much of it has arrived. */
  #body: Buffer | undefined;
  #bodyFilled = 0;
  #failed = false;

  constructor(maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES) {
    this.#maxFrameBytes = maxFrameBytes;
  }

  /** Bytes held that do not yet make a whole frame (a non-zero value at end of stream means truncation). */
  get pendingBytes(): number {
    return this.#body ? HEADER_BYTES + this.#bodyFilled : this.#headFilled;
  }

  push(chunk: Buffer): DecodeEvent[] {
    const events: DecodeEvent[] = [];
    if (this.#failed) return events;
    let offset = 0;
    const end = chunk.length;
    while (offset < end) {
      if (this.#body) {
        // Continue a split body.
        const n = Math.min(this.#body.length - this.#bodyFilled, end - offset);
        chunk.copy(this.#body, this.#bodyFilled, offset, offset + n);
        this.#bodyFilled += n;
        offset += n;
        if (this.#bodyFilled === this.#body.length) {
          const body = this.#body;
          this.#body = undefined;
          this.#bodyFilled = 0;
          events.push(decodeBody(body, 0, body.length));
        }
        continue;
      }
      let length: number;
      if (this.#headFilled > 0 || end - offset < HEADER_BYTES) {
        // A split header.
        const n = Math.min(HEADER_BYTES - this.#headFilled, end - offset);
        chunk.copy(this.#head, this.#headFilled, offset, offset + n);
        this.#headFilled += n;
        offset += n;
        if (this.#headFilled < HEADER_BYTES) break;
        this.#headFilled = 0;
        length = this.#head.readUInt32BE(0);
      } else {
        length = chunk.readUInt32BE(offset);
        offset += HEADER_BYTES;
      }
      if (length > this.#maxFrameBytes) {
        this.#failed = true;
        events.push({
          kind: 'error',
          code: 'too_large',
          message: `frame of ${length} bytes exceeds the limit of ${this.#maxFrameBytes} bytes`,
        });
        return events;
      }
      if (length === 0) {
        events.push({ kind: 'error', code: 'bad_frame', message: 'empty frame body' });
        continue;
      }
      if (end - offset >= length) {
        events.push(decodeBody(chunk, offset, offset + length));
        offset += length;
      } else {
        this.#body = Buffer.allocUnsafe(length);
        this.#bodyFilled = 0;
      }
    }
    return events;
  }
}

function decodeBody(source: Buffer, start: number, end: number): DecodeEvent {
  try {
    return { kind: 'value', value: packr.unpack(source, { start, end }), bytes: end - start };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { kind: 'error', code: 'bad_frame', message: `frame body is not valid msgpack: ${reason}` };
  }
}
