/**
 * Reads the CLI's stdout log from a byte offset, whole lines only.
 *
 * Contract: `offset` only ever advances past a complete line (ending in `\n`), so a line the process is
 * halfway through writing is read again next time rather than half-handled, and the offset is safe to
 * persist at any moment. Offsets are byte counts of the file, never lengths of decoded strings: a read
 * can cut a multi-byte character in half, and decoding would change its length. Nothing is kept between
 * reads — keeping a partial tail would make the persisted offset lie about what was handled.
 *
 * A line longer than `maxLineBytes` is never decoded whole: it is reported with its size and its first
 * and last {@link HEAD_BYTES} bytes decoded as `head` and `tail` (enough to answer a `control_request` the
 * CLI waits on, or to end a turn on its `result`), and the reader scans past it in bounded chunks.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** How much of each end of an oversized line is decoded (`head`, `tail`). */
export const HEAD_BYTES = 4096;

/** One complete line; `text` is `undefined` when it was too long to decode, or `wanted` passed it over. */
export interface StdoutLine {
  text: string | undefined;
  /** The first {@link HEAD_BYTES} bytes of a line too long to decode (a character cut there is dropped). */
  head?: string;
  /** Its last {@link HEAD_BYTES} bytes, without the newline. */
  tail?: string;
  /** Set when `read`'s `wanted` test rejected the line (it was not decoded). */
  unwanted?: true;
  /** Length in bytes, without the newline. */
  bytes: number;
  /** File offset just past this line's newline: where reading resumes once this line is handled. */
  end: number;
}

const SCAN_CHUNK = 1024 * 1024;

/** How many leading bytes of `buf` (up to `length`) form complete lines. */
function completeLineBytes(buf: Buffer, length: number = buf.length): number {
  const at = buf.lastIndexOf(10, length - 1);
  return at < 0 ? 0 : at + 1;
}

/** A reader positioned in one log file. Not safe to share between two consumers. */
export class StdoutReader {
  readonly path: string;
  readonly maxLineBytes: number;
  #offset: number;
  #fd: number | undefined;
  #buf: Buffer;

  constructor(path: string, offset: number, maxLineBytes: number) {
    this.path = path;
    this.#offset = offset;
    this.maxLineBytes = maxLineBytes;
    this.#buf = Buffer.allocUnsafe(Math.min(maxLineBytes + 1, 4 * 1024 * 1024));
  }

  /** Bytes of the file handled so far. */
  get offset(): number {
    return this.#offset;
  }

  /**
   * The complete lines available now, at most `budget` bytes' worth (so one call cannot hold the event
   * loop for a whole 50 MB backlog). The caller handles them in order and then calls `advance(line.end)`
   * for the last one it handled; the reader does not advance by itself. Lines `wanted` rejects (it sees
   * the line's bytes, without the newline) come back undecoded, marked `unwanted`.
   */
  read(budget: number = 4 * 1024 * 1024, wanted?: (line: Buffer) => boolean): StdoutLine[] {
    const fd = this.#open();
    const size = fstatSync(fd).size;
    // A log shorter than the offset was replaced (a new process truncates it): start again at 0.
    if (size < this.#offset) this.#offset = 0;
    const lines: StdoutLine[] = [];
    let position = this.#offset;
    while (position < size && position - this.#offset < budget) {
      const want = Math.min(this.#buf.length, size - position);
      const got = readSync(fd, this.#buf, 0, want, position);
      if (got <= 0) break;
      const complete = completeLineBytes(this.#buf, got);
      if (complete === 0) {
        // No newline in a full buffer: a line longer than the cap. Skip it if its end is written.
        if (got >= this.maxLineBytes + 1 || got === this.#buf.length) {
          const end = this.#findNewline(fd, position + got, size);
          if (end === undefined) break;
          lines.push({
            text: undefined,
            head: this.#decode(this.#buf, 0, Math.min(got, HEAD_BYTES)),
            tail: this.#tail(fd, position, end),
            bytes: end - position,
            end: end + 1,
          });
          position = end + 1;
          continue;
        }
        break;
      }
      let start = 0;
      while (start < complete) {
        const nl = this.#buf.indexOf(10, start);
        const bytes = nl - start;
        if (bytes > this.maxLineBytes) {
          lines.push({
            text: undefined,
            head: this.#decode(this.#buf, start, Math.min(nl, start + HEAD_BYTES)),
            tail: this.#decode(this.#buf, Math.max(start, nl - HEAD_BYTES), nl),
            bytes,
            end: position + nl + 1,
          });
        } else if (wanted && !wanted(this.#buf.subarray(start, nl))) {
          // Not decoded at all: most of a transcript's bytes are lines its reader has no use for.
          lines.push({ text: undefined, unwanted: true, bytes, end: position + nl + 1 });
        } else {
          lines.push({ text: this.#buf.toString('utf8', start, nl), bytes, end: position + nl + 1 });
        }
        start = nl + 1;
      }
      position += complete;
    }
    return lines;
  }

  /**
   * The inode of the file this reader has open (opening it if needed): a path that now names another
   * inode was rotated, and what this reader still holds is the old file.
   */
  inode(): number {
    return fstatSync(this.#open()).ino;
  }

  /** Records that everything before `offset` has been handled. */
  advance(offset: number): void {
    if (offset > this.#offset) this.#offset = offset;
  }

  /** Starts over at `offset` (a new process truncated the log). */
  reset(offset = 0): void {
    this.close();
    this.#offset = offset;
  }

  /** Releases the file descriptor; a later `read` reopens it. */
  close(): void {
    if (this.#fd !== undefined) {
      closeSync(this.#fd);
      this.#fd = undefined;
    }
  }

  /** Bytes `start..end` of `buf` as text; a character cut at either end is dropped, not mangled. */
  #decode(buf: Buffer, start: number, end: number): string {
    return buf.toString('utf8', start, end).replace(/^\uFFFD+|\uFFFD+$/g, '');
  }

  /** The last {@link HEAD_BYTES} bytes of the line from `start` to the newline at `newline`. */
  #tail(fd: number, start: number, newline: number): string {
    const from = Math.max(start, newline - HEAD_BYTES);
    const chunk = Buffer.allocUnsafe(newline - from);
    const got = readSync(fd, chunk, 0, chunk.length, from);
    return this.#decode(chunk, 0, got);
  }

  #open(): number {
    this.#fd ??= openSync(this.path, 'r');
    return this.#fd;
  }

  /** Offset of the next newline at or after `from`, scanning in bounded chunks. */
  #findNewline(fd: number, from: number, size: number): number | undefined {
    const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
    let position = from;
    while (position < size) {
      const got = readSync(fd, chunk, 0, Math.min(SCAN_CHUNK, size - position), position);
      if (got <= 0) return undefined;
      const at = chunk.indexOf(10);
      if (at >= 0 && at < got) return position + at;
      position += got;
    }
    return undefined;
  }
}
