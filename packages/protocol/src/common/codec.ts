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

/** `"seq"` as a msgpack fixstr: the key {@link withSeq} appends. */
const SEQ_KEY = Buffer.from([0xa3, 0x73, 0x65, 0x71]);

/**
 * The frame `encoded` (an {@link encodeFrame} of a map without a `seq` key) with `seq` added as its last
 * key, without encoding it again: the map header's count grows by one (a fixmap of 15 keys becomes a
 * map16) and the key and number are appended. Decodes to the same object as `encodeFrame({ ...value, seq })`.
 * Throws if `encoded` is not a map, or `seq` not a safe non-negative integer.
 */
export function withSeq(encoded: Buffer, seq: number): Buffer {
  if (!Number.isSafeInteger(seq) || seq < 0)
    throw new RangeError(`seq must be a safe integer ≥ 0, not ${seq}`);
  const head = encoded[HEADER_BYTES] as number;
  let count: number;
  let bodyStart: number;
  if (head >= 0x80 && head <= 0x8f) {
    count = head - 0x80;
    bodyStart = HEADER_BYTES + 1;
  } else if (head === 0xde) {
    count = encoded.readUInt16BE(HEADER_BYTES + 1);
    bodyStart = HEADER_BYTES + 3;
  } else if (head === 0xdf) {
    count = encoded.readUInt32BE(HEADER_BYTES + 1);
    bodyStart = HEADER_BYTES + 5;
  } else {
    throw new TypeError('withSeq: the encoded frame is not a map');
  }
  const next = count + 1;
  const header =
    next <= 15
      ? Buffer.from([0x80 + next])
      : next <= 0xffff
        ? Buffer.from([0xde, next >> 8, next & 0xff])
        : Buffer.from([0xdf, (next >>> 24) & 0xff, (next >> 16) & 0xff, (next >> 8) & 0xff, next & 0xff]);
  const number = encodeUint(seq);
  const bodyBytes = encoded.length - bodyStart;
  const out = Buffer.allocUnsafe(HEADER_BYTES + header.length + bodyBytes + SEQ_KEY.length + number.length);
  let at = HEADER_BYTES;
  at += header.copy(out, at);
  at += encoded.copy(out, at, bodyStart);
  at += SEQ_KEY.copy(out, at);
  number.copy(out, at);
  out.writeUInt32BE(out.length - HEADER_BYTES, 0);
  return out;
}

/** A non-negative safe integer in msgpack's shortest unsigned form. */
function encodeUint(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n <= 0xff) return Buffer.from([0xcc, n]);
  if (n <= 0xffff) return Buffer.from([0xcd, n >> 8, n & 0xff]);
  if (n <= 0xffffffff) {
    const b = Buffer.allocUnsafe(5);
    b[0] = 0xce;
    b.writeUInt32BE(n, 1);
    return b;
  }
  const b = Buffer.allocUnsafe(9);
  b[0] = 0xcf;
  b.writeBigUInt64BE(BigInt(n), 1);
  return b;
}

/** What the decoder makes of the bytes: a decoded value, or a refusal naming what was wrong. */
export type DecodeEvent =
  | { kind: 'value'; value: unknown; bytes: number }
  | {
      kind: 'error';
      code: 'bad_frame' | 'too_large';
      message: string;
      /** Set when the body decoded but is not plain data: lets the caller name the frame it refuses. */
      value?: unknown;
    };

/**
 * Incremental reader. Feed it chunks as they arrive, in order; `push` yields the events the chunk
 * completes, lazily: consume them in order (a `for…of` does), and the limit may be changed between two
 * events — a connection raises it once the handshake is done. Stopping early drops the rest of the chunk.
 * After a `too_large` event the stream cannot be resynchronised and the decoder refuses further input;
 * a `bad_frame` body is skipped and decoding goes on (the caller decides whether to keep the connection).
 *
 * Frames wholly inside a chunk are decoded in place; a frame split across chunks is gathered into one
 * buffer of its announced size, so a large frame costs one copy however many chunks carry it.
 */
export class FrameDecoder {
  /** Largest body accepted; checked against each header as it is read. */
  maxFrameBytes: number;
  /** Bytes of a header split across chunks. */
  #head = Buffer.alloc(HEADER_BYTES);
  #headFilled = 0;
  /** The body of a frame split across chunks, and how much of it has arrived. */
  #body: Buffer | undefined;
  #bodyFilled = 0;
  #failed = false;

  constructor(maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES) {
    this.maxFrameBytes = maxFrameBytes;
  }

  /** Bytes held that do not yet make a whole frame (a non-zero value at end of stream means truncation). */
  get pendingBytes(): number {
    return this.#body ? HEADER_BYTES + this.#bodyFilled : this.#headFilled;
  }

  *push(chunk: Buffer): Generator<DecodeEvent, void, undefined> {
    if (this.#failed) return;
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
          yield decodeBody(body, 0, body.length);
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
        if (this.#headFilled < HEADER_BYTES) return;
        this.#headFilled = 0;
        length = this.#head.readUInt32BE(0);
      } else {
        length = chunk.readUInt32BE(offset);
        offset += HEADER_BYTES;
      }
      if (length > this.maxFrameBytes) {
        this.#failed = true;
        yield {
          kind: 'error',
          code: 'too_large',
          message: `frame of ${length} bytes exceeds the limit of ${this.maxFrameBytes} bytes`,
        };
        return;
      }
      if (length === 0) {
        yield { kind: 'error', code: 'bad_frame', message: 'empty frame body' };
        continue;
      }
      if (end - offset >= length) {
        const start = offset;
        offset += length;
        yield decodeBody(chunk, start, start + length);
      } else {
        this.#body = Buffer.allocUnsafe(length);
        this.#bodyFilled = 0;
      }
    }
  }
}

/** How deep a frame may nest; real frames stay under 10 (tool inputs are nested JSON). */
const MAX_DEPTH = 64;

/**
 * Why `value` is not plain data, or `undefined` when it is: only null, booleans, finite or not numbers,
 * strings, arrays and objects with the plain prototype, nested at most {@link MAX_DEPTH} deep. msgpack
 * extension types (dates, sets, maps, errors, regular expressions, big integers, typed arrays) and binary
 * decode to other things and are refused; `undefined` is allowed, since msgpackr writes it as extension 0.
 * The sender applies the same check, so what it stores the receiver can take.
 */
export function plainDataProblem(value: unknown, depth = 0): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'undefined':
      return undefined;
    case 'object': {
      if (value === null) return undefined;
      if (depth >= MAX_DEPTH) return `nested deeper than ${MAX_DEPTH} levels`;
      if (Array.isArray(value)) {
        for (const item of value) {
          const problem = plainDataProblem(item, depth + 1);
          if (problem) return problem;
        }
        return undefined;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        return `contains a ${describeKind(value)} (msgpack extension types and binary are refused)`;
      }
      for (const key in value) {
        const problem = plainDataProblem((value as Record<string, unknown>)[key], depth + 1);
        if (problem) return problem;
      }
      return undefined;
    }
    default:
      return `contains a ${typeof value} (msgpack extension types are refused)`;
  }
}

function describeKind(value: object): string {
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? name.slice(0, 40) : 'non-plain object';
}

function decodeBody(source: Buffer, start: number, end: number): DecodeEvent {
  try {
    const value: unknown = packr.unpack(source, { start, end });
    const problem = plainDataProblem(value);
    if (problem) {
      return {
        kind: 'error',
        code: 'bad_frame',
        message: `frame body ${problem}: send only maps, arrays, strings, numbers, booleans and nil`,
        value,
      };
    }
    return { kind: 'value', value, bytes: end - start };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { kind: 'error', code: 'bad_frame', message: `frame body is not valid msgpack: ${reason}` };
  }
}
