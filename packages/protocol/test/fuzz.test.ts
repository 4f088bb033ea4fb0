/**
 * Fuzzes the receiving path — `FrameDecoder` then `parseFrame` — with random and mutated frames from a
 * seeded generator: nothing may throw, and the heap must not grow with the number of frames.
 *
 * The unit run takes 100,000 frames; the full run takes a million:
 *   FUZZ_FRAMES=1000000 npx vitest run packages/protocol/test/fuzz.test.ts
 * It prints frames/s, how many decoded, parsed and were refused, and the heap growth.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder } from '../src/common/codec.js';
import { PROTOCOL_VERSION, parseFrame } from '../src/common/messages/frame.js';

const FRAMES = Number(process.env.FUZZ_FRAMES ?? 100_000);
const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** mulberry32: small, fast, and the same sequence for the same seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Valid frames of several shapes, to mutate. */
const corpus = [
  { type: 'hello', version: PROTOCOL_VERSION, agent: 'demo', instanceId: 'i', streamId: 's', lastSeen: 3 },
  { type: 'ack', seq: 9 },
  { type: 'ping', nonce: 1 },
  { type: 'refused', seq: 4, code: 'invalid', message: 'no' },
  { type: 'text_delta', turnId: 't1', blockId: 'b1', delta: 'héllo ✓ 🌍' },
  {
    type: 'user_message',
    seq: 2,
    inboundId: 'in-1',
    route: { chatId: -100123, threadId: 7 },
    telegramMessageId: 55,
    sender: { id: 1, name: 'Ann', username: 'ann' },
    text: 'please look at this',
    attachments: [{ kind: 'document', path: '/tmp/a.pdf', name: 'a.pdf', size: 12 }],
    sentAt: 1_700_000_000_000,
  },
  {
    type: 'tool_started',
    seq: 3,
    turnId: 't1',
    toolUseId: 'x',
    name: 'Bash',
    input: { command: 'ls -la', nested: { deep: [1, 2, { k: null }] } },
  },
  {
    type: 'question',
    seq: 5,
    requestId: 'r',
    route: { chatId: 1 },
    questions: [
      { question: 'Which?', options: [{ label: 'A' }, { label: 'B', description: 'b' }], multiSelect: true },
    ],
  },
  { type: 'question_answer', seq: 6, requestId: 'r', answers: { 'Which?': 'A, B' } },
].map((frame) => encodeFrame(frame));

/** msgpack bytes that start extension values, strings, maps and arrays of every width. */
const MARKERS = [
  0xc1, 0xc4, 0xc7, 0xc8, 0xc9, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xdc, 0xdd, 0xde, 0xdf, 0xff,
];

function mutate(random: () => number): Buffer {
  const pick = (n: number) => Math.floor(random() * n);
  const base = corpus[pick(corpus.length)] as Buffer;
  const kind = pick(8);
  if (kind === 0) {
    // Random bytes under a correct header.
    const body = Buffer.alloc(1 + pick(64));
    for (let i = 0; i < body.length; i++) body[i] = pick(256);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    return Buffer.concat([header, body]);
  }
  const bytes = Buffer.from(base);
  if (kind === 1) {
    for (let flips = 1 + pick(4); flips > 0; flips--) {
      const at = 4 + pick(bytes.length - 4);
      bytes[at] = (bytes[at] as number) ^ (1 << pick(8));
    }
    return bytes;
  }
  if (kind === 2) {
    bytes[4 + pick(bytes.length - 4)] = MARKERS[pick(MARKERS.length)] as number;
    return bytes;
  }
  if (kind === 3) return bytes.subarray(0, pick(bytes.length)); // truncated
  if (kind === 4) {
    bytes.writeUInt32BE(pick(2) === 0 ? pick(bytes.length * 2) : pick(2 ** 32), 0); // a lying header
    return bytes;
  }
  if (kind === 5) {
    // A body spliced from two frames, under the first one's header.
    const other = corpus[pick(corpus.length)] as Buffer;
    const cut = 4 + pick(bytes.length - 4);
    const spliced = Buffer.concat([bytes.subarray(0, cut), other.subarray(4 + pick(other.length - 4))]);
    spliced.writeUInt32BE(spliced.length - 4, 0);
    return spliced;
  }
  if (kind === 6) {
    // Random bytes inserted into the body.
    const at = 4 + pick(bytes.length - 4);
    const noise = Buffer.alloc(1 + pick(8));
    for (let i = 0; i < noise.length; i++) noise[i] = pick(256);
    const grown = Buffer.concat([bytes.subarray(0, at), noise, bytes.subarray(at)]);
    grown.writeUInt32BE(grown.length - 4, 0);
    return grown;
  }
  return bytes; // unchanged: the valid frames must still decode among the noise
}

describe('decoder fuzz', () => {
  it(`survives ${FRAMES.toLocaleString('en')} random and mutated frames with a bounded heap`, () => {
    const random = prng(SEED);
    const counts = { values: 0, parsed: 0, refused: 0, tooLarge: 0 };
    let decoder = new FrameDecoder(64 * 1024);
    const run = (n: number) => {
      for (let i = 0; i < n; i++) {
        const bytes = mutate(random);
        // Sometimes as one chunk, sometimes split in two, as a socket may deliver it.
        const split = random() < 0.3 ? Math.floor(random() * bytes.length) : bytes.length;
        for (const chunk of [bytes.subarray(0, split), bytes.subarray(split)]) {
          for (const event of decoder.push(chunk)) {
            if (event.kind === 'error') {
              counts.refused++;
              if (event.code === 'too_large') counts.tooLarge++;
              continue;
            }
            counts.values++;
            if (parseFrame(event.value).ok) counts.parsed++;
          }
        }
        // A connection is dropped after a too-large header or a frame left incomplete; so is this decoder.
        if (decoder.pendingBytes > 0 || counts.tooLarge > 0) {
          decoder = new FrameDecoder(64 * 1024);
          counts.tooLarge = 0;
        }
      }
    };
    run(Math.min(10_000, FRAMES)); // warm up before the heap baseline
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    run(FRAMES);
    const seconds = (performance.now() - started) / 1000;
    gc();
    const growth = process.memoryUsage().heapUsed - heapBefore;
    console.log(
      `fuzz: ${FRAMES} frames in ${seconds.toFixed(2)} s (${Math.round(FRAMES / seconds)} frames/s); ` +
        `values ${counts.values}, valid frames ${counts.parsed}, refused ${counts.refused}; ` +
        `heap growth ${(growth / 1024 / 1024).toFixed(2)} MiB`,
    );
    expect(counts.parsed).toBeGreaterThan(FRAMES / 20); // the unchanged eighth, and lucky mutations
    expect(counts.refused).toBeGreaterThan(FRAMES / 4);
    expect(growth).toBeLessThan(16 * 1024 * 1024);
  }, 600_000);
});
