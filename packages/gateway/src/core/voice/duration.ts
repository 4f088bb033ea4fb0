/**
 * A recording's length, read from its bytes: the client's `duration` (a field of the Telegram message,
 * which the sender's app fills in) is not what the transcription cap and its cost are held to, since a
 * sender may write any number there. Pure: the bytes in, seconds (or `undefined`) out.
 *
 * What is read, per container (only its own headers, nothing decoded):
 * - Ogg (voice notes: Opus; also Vorbis): the last page's granule position, less Opus's pre-skip, over
 *   the codec's rate (48 kHz for Opus, the identification header's for Vorbis);
 * - MP4/M4A (video notes, many audio files): `moov/mvhd`'s duration over its timescale;
 * - MP3: a Xing/Info header's frame count, else the first frame's bit rate over the bytes (constant
 *   bit rate);
 * - WAV: the `data` chunk's size over the `fmt ` chunk's byte rate.
 * Anything else, or a file these headers do not make sense of, is `undefined`: the caller then holds the
 * recording to {@link durationBound}, which no honest recording exceeds.
 */

/** Seconds the bytes of a recording in an unknown format are held to: as if at 16 kbit/s (a low voice rate). */
export function durationBound(bytes: number): number {
  return Math.ceil((bytes * 8) / 16_000);
}

/** The recording's length in seconds, read from its container; `undefined` when it cannot be read. */
export function recordingDuration(data: Uint8Array): number | undefined {
  const seconds = oggDuration(data) ?? mp4Duration(data) ?? wavDuration(data) ?? mp3Duration(data);
  return seconds !== undefined && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

const ascii = (data: Uint8Array, at: number, length: number): string =>
  at < 0 || at + length > data.length ? '' : String.fromCharCode(...data.subarray(at, at + length));
const view = (data: Uint8Array): DataView => new DataView(data.buffer, data.byteOffset, data.byteLength);

/** Ogg: the codec from the first page's packet, the length from the last page's granule position. */
function oggDuration(data: Uint8Array): number | undefined {
  if (ascii(data, 0, 4) !== 'OggS' || data.length < 27) return undefined;
  const v = view(data);
  const segments = data[26] ?? 0;
  const packet = 27 + segments;
  let rate: number;
  let preSkip = 0;
  if (ascii(data, packet, 8) === 'OpusHead' && packet + 12 <= data.length) {
    rate = 48_000;
    preSkip = v.getUint16(packet + 10, true);
  } else if (ascii(data, packet, 7) === '\x01vorbis' && packet + 16 <= data.length) {
    rate = v.getUint32(packet + 12, true);
  } else {
    return undefined;
  }
  if (rate === 0) return undefined;
  // The last page whose granule position is set (-1: no packet ends on that page).
  for (let at = data.length - 27; at >= 0; at--) {
    if (data[at] !== 0x4f || ascii(data, at, 4) !== 'OggS' || data[at + 4] !== 0) continue;
    const granule = v.getBigUint64(at + 6, true);
    if (granule === 0xffffffffffffffffn) continue;
    return Math.max(0, Number(granule) - preSkip) / rate;
  }
  return undefined;
}

/** MP4: the top-level boxes to `moov`, and in it `mvhd`. */
function mp4Duration(data: Uint8Array): number | undefined {
  if (ascii(data, 4, 4) !== 'ftyp') return undefined;
  const v = view(data);
  const box = (from: number, to: number, type: string): { start: number; end: number } | undefined => {
    for (let at = from; at + 8 <= to; ) {
      let size = v.getUint32(at);
      let header = 8;
      if (size === 1 && at + 16 <= to) {
        size = Number(v.getBigUint64(at + 8));
        header = 16;
      } else if (size === 0) {
        size = to - at;
      }
      if (size < header) return undefined;
      if (ascii(data, at + 4, 4) === type) return { start: at + header, end: Math.min(to, at + size) };
      at += size;
    }
    return undefined;
  };
  const moov = box(0, data.length, 'moov');
  const mvhd = moov && box(moov.start, moov.end, 'mvhd');
  if (!mvhd) return undefined;
  const version = data[mvhd.start];
  if (version === 1 && mvhd.start + 32 <= mvhd.end) {
    const scale = v.getUint32(mvhd.start + 20);
    return scale === 0 ? undefined : Number(v.getBigUint64(mvhd.start + 24)) / scale;
  }
  if (version === 0 && mvhd.start + 20 <= mvhd.end) {
    const scale = v.getUint32(mvhd.start + 12);
    return scale === 0 ? undefined : v.getUint32(mvhd.start + 16) / scale;
  }
  return undefined;
}

/** WAV: `RIFF…WAVE`, its `fmt ` chunk's byte rate and its `data` chunk's size. */
function wavDuration(data: Uint8Array): number | undefined {
  if (ascii(data, 0, 4) !== 'RIFF' || ascii(data, 8, 4) !== 'WAVE') return undefined;
  const v = view(data);
  let byteRate: number | undefined;
  for (let at = 12; at + 8 <= data.length; ) {
    const id = ascii(data, at, 4);
    const size = v.getUint32(at + 4, true);
    if (id === 'fmt ' && at + 20 <= data.length) byteRate = v.getUint32(at + 16, true);
    if (id === 'data') return byteRate ? Math.min(size, data.length - at - 8) / byteRate : undefined;
    at += 8 + size + (size % 2);
  }
  return undefined;
}

/** Bit rates (kbit/s) of MPEG-1 Layer III and of MPEG-2/2.5 Layer III, by the header's index. */
const MP3_RATES = {
  v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
} as const;
const MP3_SAMPLE_RATES = {
  3: [44_100, 48_000, 32_000],
  2: [22_050, 24_000, 16_000],
  0: [11_025, 12_000, 8000],
};

/** MP3 (Layer III): after an ID3v2 tag, the first frame; its Xing/Info frame count, or its bit rate. */
function mp3Duration(data: Uint8Array): number | undefined {
  let at = 0;
  if (ascii(data, 0, 3) === 'ID3' && data.length > 10) {
    const size =
      (((data[6] ?? 0) & 0x7f) << 21) |
      (((data[7] ?? 0) & 0x7f) << 14) |
      (((data[8] ?? 0) & 0x7f) << 7) |
      ((data[9] ?? 0) & 0x7f);
    at = 10 + size;
  }
  const b1 = data[at + 1] ?? 0;
  const b2 = data[at + 2] ?? 0;
  const b3 = data[at + 3] ?? 0;
  if (data[at] !== 0xff || (b1 & 0xe0) !== 0xe0 || ((b1 >> 1) & 3) !== 1) return undefined;
  const version = (b1 >> 3) & 3; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  if (version === 1) return undefined;
  const kbps = (version === 3 ? MP3_RATES.v1 : MP3_RATES.v2)[(b2 >> 4) & 15];
  const sampleRate = MP3_SAMPLE_RATES[version as 0 | 2 | 3][(b2 >> 2) & 3];
  if (!kbps || !sampleRate) return undefined;
  const samplesPerFrame = version === 3 ? 1152 : 576;
  const mono = ((b3 >> 6) & 3) === 3;
  const side = version === 3 ? (mono ? 17 : 32) : mono ? 9 : 17;
  const tag = ascii(data, at + 4 + side, 4);
  if ((tag === 'Xing' || tag === 'Info') && ((data[at + 4 + side + 7] ?? 0) & 1) === 1) {
    const frames = view(data).getUint32(at + 4 + side + 8);
    return (frames * samplesPerFrame) / sampleRate;
  }
  return ((data.length - at) * 8) / (kbps * 1000);
}
