/**
 * One line of the outbox log (`outbox.ts` has the format and the records' meaning): a record's checksum
 * and JSON, written whole or found damaged; and the source tag that says which stdout line produced a
 * frame.
 */
import { crc32 } from 'node:zlib';

/** Where a frame came from: `[generation, stdout line end offset, index of the frame in that line]`. */
export type SourceTag = readonly [number, number, number];

/** Orders source tags; negative when `a` came first. */
export function compareSource(a: SourceTag, b: SourceTag): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** The log format's version, in its first record. */
export const FORMAT_VERSION = 2;
/** The byte that ends every record. */
export const NEWLINE = 0x0a;
/** `xxxxxxxx ` before the JSON of each record. */
const PREFIX_BYTES = 9;

/** A record of the log, before it is encoded and after it is decoded. */
export type LogRecord = Record<string, unknown>;

/** One record as it is written: checksum, space, JSON, newline. */
export function encodeRecord(record: LogRecord): Buffer {
  const json = Buffer.from(JSON.stringify(record));
  const line = Buffer.allocUnsafe(PREFIX_BYTES + json.length + 1);
  line.write(crc32(json).toString(16).padStart(8, '0'), 0, 'latin1');
  line[8] = 0x20;
  json.copy(line, PREFIX_BYTES);
  line[line.length - 1] = NEWLINE;
  return line;
}

/** The record a whole line (without its newline) holds, or `undefined` if the line is damaged. */
export function decodeRecord(line: Buffer): LogRecord | undefined {
  if (line.length <= PREFIX_BYTES || line[8] !== 0x20) return undefined;
  const crc = Number.parseInt(line.toString('latin1', 0, 8), 16);
  const json = line.subarray(PREFIX_BYTES);
  if (!/^[0-9a-f]{8}$/.test(line.toString('latin1', 0, 8)) || crc32(json) !== crc) return undefined;
  try {
    const record: unknown = JSON.parse(json.toString('utf8'));
    return typeof record === 'object' && record !== null ? (record as LogRecord) : undefined;
  } catch {
    return undefined;
  }
}
