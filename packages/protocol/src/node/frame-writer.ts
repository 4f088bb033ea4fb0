/**
 * The write side of a connection's socket: each frame encoded and written, the frames of one tick
 * corked into one writev, and the socket's backpressure as a promise (`whenWritable`). The connection
 * (`connection.ts`) decides what to write; this file only how.
 */
import type { Duplex } from 'node:stream';
import { encodeFrame } from '../common/codec.js';
import { describeError, type Logger } from '../common/logger.js';
import type { Frame } from '../common/messages/frame.js';

/** Writes one connection's frames to its socket (see the module comment). */
export class FrameWriter {
  readonly #socket: Duplex;
  readonly #log: Logger;
  #drainWaiters: Array<() => void> = [];
  #needsDrain = false;
  #corked = false;
  #closed = false;

  constructor(socket: Duplex, log: Logger) {
    this.#socket = socket;
    this.#log = log;
    socket.on('drain', () => this.#onDrain());
  }

  /** Encodes and writes one frame; a frame that cannot be encoded is logged and not sent. */
  write(frame: Frame): void {
    if (this.#socket.destroyed || !this.#socket.writable) return;
    let bytes: Buffer;
    try {
      bytes = encodeFrame(frame);
    } catch (err) {
      this.#log.error(
        { event: 'encode_failed', type: frame.type, err: describeError(err) },
        'could not encode frame',
      );
      return;
    }
    this.writeBytes(bytes);
  }

  /** Writes a frame encoded already; nothing when the socket can no longer be written. */
  writeBytes(bytes: Buffer): void {
    if (this.#socket.destroyed || !this.#socket.writable) return;
    // Frames written in one tick leave in one writev: bursts of deltas cost one syscall, not one each.
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      process.nextTick(() => {
        this.#corked = false;
        this.#socket.uncork();
      });
    }
    if (!this.#socket.write(bytes)) this.#needsDrain = true;
  }

  /** Resolves once the socket's buffer has drained below its high-water mark (or the connection closed). */
  whenWritable(): Promise<void> {
    if (!this.#needsDrain || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** The connection is closed: every caller waiting for the socket goes on, and none waits again. */
  close(): void {
    this.#closed = true;
    this.#onDrain();
  }

  #onDrain(): void {
    this.#needsDrain = false;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
