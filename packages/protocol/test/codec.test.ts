import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder } from '../src/common/codec.js';

const sample = [
  { type: 'ping', nonce: 1 },
  { type: 'text_delta', turnId: 't1', blockId: 'b1', delta: 'héllo ✓ 🌍' },
  {
    type: 'tool_started',
    seq: 3,
    turnId: 't1',
    toolUseId: 'x',
    name: 'Bash',
    input: { command: 'ls -la', n: 2 },
  },
];

function values(events: ReturnType<FrameDecoder['push']>): unknown[] {
  return [...events].map((event) => {
    if (event.kind !== 'value') throw new Error(`unexpected ${event.kind}: ${event.message}`);
    return event.value;
  });
}

describe('codec', () => {
  it('decodes several frames delivered in one chunk', () => {
    const decoder = new FrameDecoder();
    const bytes = Buffer.concat(sample.map((value) => encodeFrame(value)));
    expect(values(decoder.push(bytes))).toEqual(sample);
    expect(decoder.pendingBytes).toBe(0);
  });

  it('decodes the same frames when the stream is split at every byte boundary', () => {
    const bytes = Buffer.concat(sample.map((value) => encodeFrame(value)));
    for (let cut = 1; cut < bytes.length; cut++) {
      const decoder = new FrameDecoder();
      const out = [
        ...values(decoder.push(bytes.subarray(0, cut))),
        ...values(decoder.push(bytes.subarray(cut))),
      ];
      expect(out, `cut at ${cut}`).toEqual(sample);
    }
  });

  it('decodes a stream fed one byte at a time', () => {
    const bytes = Buffer.concat(sample.map((value) => encodeFrame(value)));
    const decoder = new FrameDecoder();
    const out: unknown[] = [];
    for (let i = 0; i < bytes.length; i++) out.push(...values(decoder.push(bytes.subarray(i, i + 1))));
    expect(out).toEqual(sample);
  });

  it('reports a truncated frame as pending bytes rather than a value', () => {
    const bytes = encodeFrame(sample[2]);
    const decoder = new FrameDecoder();
    expect([...decoder.push(bytes.subarray(0, bytes.length - 1))]).toEqual([]);
    expect(decoder.pendingBytes).toBe(bytes.length - 1);
  });

  it('refuses a frame whose announced length is over the limit, before buffering it', () => {
    const decoder = new FrameDecoder(1024);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(1025);
    const events = [...decoder.push(header)];
    expect(events).toEqual([expect.objectContaining({ kind: 'error', code: 'too_large' })]);
    // The stream cannot be trusted after that: further input is ignored.
    expect([...decoder.push(encodeFrame({ type: 'ping', nonce: 1 }))]).toEqual([]);
  });

  it('reports a body that is not msgpack and keeps decoding the frames after it', () => {
    const garbage = Buffer.from([0, 0, 0, 2, 0xc1, 0xc1]); // 0xc1 is never used in msgpack
    const decoder = new FrameDecoder();
    const events = [...decoder.push(Buffer.concat([garbage, encodeFrame({ type: 'ping', nonce: 7 })]))];
    expect(events[0]).toMatchObject({ kind: 'error', code: 'bad_frame' });
    expect(events[1]).toEqual({
      kind: 'value',
      value: { type: 'ping', nonce: 7 },
      bytes: expect.any(Number),
    });
  });

  it('round-trips a 100 KB string and binary-safe text', () => {
    const big = {
      type: 'text',
      seq: 1,
      turnId: 't',
      blockId: 'b',
      text: `${'x'.repeat(100_000)}\u0000\uffff`,
    };
    const decoder = new FrameDecoder();
    expect(values(decoder.push(encodeFrame(big)))).toEqual([big]);
  });

  it('applies a raised limit to the frames after the event that raised it, within the same chunk', () => {
    // A handshake followed, in one chunk, by a resent frame over the pre-handshake limit.
    const big = { type: 'text', seq: 1, turnId: 't', blockId: 'b', text: 'x'.repeat(5_000) };
    const decoder = new FrameDecoder(1024);
    const out: unknown[] = [];
    for (const event of decoder.push(
      Buffer.concat([encodeFrame({ type: 'ping', nonce: 1 }), encodeFrame(big)]),
    )) {
      if (event.kind !== 'value') throw new Error(event.message);
      out.push(event.value);
      decoder.maxFrameBytes = 1024 * 1024;
    }
    expect(out).toEqual([{ type: 'ping', nonce: 1 }, big]);
  });

  // Hand-made msgpack: fixmap(2) {"type": "ping", "nonce": <ext>}.
  const withNonce = (ext: number[]) =>
    Buffer.from([
      0x82,
      0xa4,
      ...Buffer.from('type'),
      0xa4,
      ...Buffer.from('ping'),
      0xa5,
      ...Buffer.from('nonce'),
      ...ext,
    ]);
  const framed = (body: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, body.length]), body]);
  const extensions: Array<[string, number[]]> = [
    ['a timestamp (ext -1)', [0xd6, 0xff, 0, 0, 0, 1]],
    ['a set (ext 0x73)', [0xd4, 0x73, 0x90]],
    ['a big integer (ext 0x42)', [0xd4, 0x42, 0x05]],
    ['an unknown extension (ext 0x10)', [0xd5, 0x10, 1, 2]],
    ['binary data', [0xc4, 2, 1, 2]],
  ];
  for (const [name, ext] of extensions) {
    it(`refuses ${name} as a bad frame and keeps decoding`, () => {
      const decoder = new FrameDecoder();
      const events = [
        ...decoder.push(Buffer.concat([framed(withNonce(ext)), encodeFrame({ type: 'ping', nonce: 2 })])),
      ];
      expect(events[0]).toMatchObject({ kind: 'error', code: 'bad_frame' });
      expect(events[1]).toMatchObject({ kind: 'value', value: { type: 'ping', nonce: 2 } });
    });
  }

  it('refuses nesting deeper than 64 levels', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    const decoder = new FrameDecoder();
    const [event] = [...decoder.push(encodeFrame({ type: 'ping', nonce: deep }))];
    expect(event).toMatchObject({
      kind: 'error',
      code: 'bad_frame',
      message: expect.stringMatching(/deeper than 64/),
    });
  });
});
