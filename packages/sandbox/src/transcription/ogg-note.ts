/**
 * A voice note as Telegram's apps record them, in miniature: an Ogg Opus file whose headers say how long
 * it is (the last page's granule position) and whose one audio packet carries the words the stand-in
 * transcribers hear ({@link SAYS_MARKER}). Valid Ogg (page checksums included), so a program that reads
 * the container reads the length; not decodable audio, which no test needs.
 */
import { SAYS_MARKER } from './transcription-server.js';

/** The pre-skip Opus encoders write (6.5 ms at 48 kHz). */
const PRE_SKIP = 312;

/** An Ogg Opus note `seconds` long that the stand-in transcribers hear as `said`. */
export function oggOpusNote(said: string, seconds: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'ascii');
  head[8] = 1; // version
  head[9] = 1; // channels
  head.writeUInt16LE(PRE_SKIP, 10);
  head.writeUInt32LE(48_000, 12); // the input's rate, for information
  const tags = Buffer.concat([Buffer.from('OpusTags'), u32(9), Buffer.from('switchyard'), u32(0)]);
  const audio = Buffer.from(`${SAYS_MARKER}${said}\n`);
  const end = BigInt(Math.round(seconds * 48_000) + PRE_SKIP);
  return Buffer.concat([page(head, 0n, 0, 0x02), page(tags, 0n, 1, 0), page(audio, end, 2, 0x04)]);
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value, 0);
  return b;
}

/** One Ogg page holding one packet (under 255 bytes × 255 segments). */
function page(packet: Buffer, granule: bigint, sequence: number, flags: number): Buffer {
  const lacing: number[] = [];
  for (let left = packet.length; ; left -= 255) {
    lacing.push(Math.min(left, 255));
    if (left < 255) break;
  }
  const header = Buffer.alloc(27);
  header.write('OggS', 0, 'ascii');
  header[5] = flags;
  header.writeBigUInt64LE(granule, 6);
  header.writeUInt32LE(0x5359, 14); // the stream's serial number
  header.writeUInt32LE(sequence, 18);
  header[26] = lacing.length;
  const bytes = Buffer.concat([header, Buffer.from(lacing), packet]);
  bytes.writeUInt32LE(oggCrc(bytes), 22);
  return bytes;
}

/** Ogg's CRC-32 (polynomial 0x04c11db7, not reflected, starting at 0), over the page with its CRC zero. */
function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
}
