/**
 * A recording's length read from its bytes (`core/voice/duration.ts`), for each container a note comes
 * in, built here byte by byte; and what a file nothing can be read from is held to.
 */
import { oggOpusNote } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { durationBound, recordingDuration } from '../../src/core/voice/duration.js';

const box = (type: string, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, 'ascii');
  return Buffer.concat([head, body]);
};

/** An MP4 whose `mvhd` (version 0) says `duration` units of `timescale`, `moov` after the media. */
function mp4(timescale: number, duration: number): Buffer {
  const mvhd = Buffer.alloc(100);
  mvhd.writeUInt32BE(timescale, 12);
  mvhd.writeUInt32BE(duration, 16);
  return Buffer.concat([
    box('ftyp', Buffer.from('isom\0\0\x02\0isommp41')),
    box('mdat', Buffer.alloc(300, 7)),
    box('moov', box('mvhd', mvhd), box('trak', Buffer.alloc(20))),
  ]);
}

/** A WAV of `seconds` of 16-bit mono at `rate`. */
function wav(seconds: number, rate = 16_000): Buffer {
  const data = rate * 2 * seconds;
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0);
  fmt.writeUInt16LE(1, 2);
  fmt.writeUInt32LE(rate, 4);
  fmt.writeUInt32LE(rate * 2, 8);
  fmt.writeUInt16LE(2, 12);
  fmt.writeUInt16LE(16, 14);
  const chunk = (id: string, body: Buffer) => {
    const head = Buffer.alloc(8);
    head.write(id, 0, 'ascii');
    head.writeUInt32LE(body.length, 4);
    return Buffer.concat([head, body]);
  };
  const riff = Buffer.concat([Buffer.from('WAVE'), chunk('fmt ', fmt), chunk('data', Buffer.alloc(data))]);
  return Buffer.concat([Buffer.from('RIFF'), Buffer.from([0, 0, 0, 0]), riff]);
}

/** MPEG-1 Layer III frames at 128 kbit/s, 44.1 kHz, stereo, after an ID3v2 tag; `frames` in a Xing header. */
function mp3(bytes: number, xingFrames?: number): Buffer {
  const id3 = Buffer.concat([Buffer.from('ID3\x03\0\0\0\0\0\x0a'), Buffer.alloc(10)]);
  const frame = Buffer.alloc(bytes);
  frame.set([0xff, 0xfb, 0x90, 0x00]);
  if (xingFrames !== undefined) {
    frame.write('Xing', 4 + 32, 'ascii');
    frame.writeUInt32BE(1, 4 + 32 + 4);
    frame.writeUInt32BE(xingFrames, 4 + 32 + 8);
  }
  return Buffer.concat([id3, frame]);
}

describe('a recording’s length from its bytes', () => {
  it.each<[string, Buffer, number | undefined]>([
    ['an Ogg Opus voice note (granule less pre-skip, at 48 kHz)', oggOpusNote('hi', 600), 600],
    ['a short one', oggOpusNote('hi', 3.5), 3.5],
    ['an MP4 video note (mvhd)', mp4(1000, 12_500), 12.5],
    ['a WAV', wav(7), 7],
    ['an MP3 with a Xing header (frames × 1152 / 44.1 kHz)', mp3(2000, 3828), (3828 * 1152) / 44_100],
    ['a constant-bit-rate MP3 (bytes over 128 kbit/s)', mp3(160_000), 10],
    ['not a recording', Buffer.from('hello, this is text'), undefined],
    [
      'an Ogg page with no codec header it knows',
      Buffer.concat([Buffer.from('OggS\0\x02'), Buffer.alloc(100, 3)]),
      undefined,
    ],
    ['nothing', Buffer.alloc(0), undefined],
  ])('%s', (_what, bytes, seconds) => {
    const got = recordingDuration(bytes);
    if (seconds === undefined) expect(got).toBeUndefined();
    else expect(got).toBeCloseTo(seconds, 2);
  });

  it('a file nothing can be read from is held to its size at 16 kbit/s', () => {
    expect(durationBound(2000)).toBe(1);
    expect(durationBound(20 * 1024 * 1024)).toBe(10_486);
  });
});
