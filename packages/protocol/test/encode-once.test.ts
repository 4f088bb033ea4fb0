import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, withSeq } from '../src/common/codec.js';
import type { AppFrame } from '../src/common/messages/frame.js';
import { frameProblem } from '../src/node/endpoint.js';
import { memoryLink, side, waitFor } from './harness.js';

function decodeOne(bytes: Buffer): unknown {
  const events = [...new FrameDecoder().push(bytes)];
  expect(events).toHaveLength(1);
  const [event] = events;
  if (event?.kind !== 'value') throw new Error(`not a value: ${JSON.stringify(event)}`);
  return event.value;
}

describe('withSeq numbers an encoded frame without encoding it again', () => {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
  const cases: [string, Record<string, unknown>][] = [
    ['a small map (fixmap)', { type: 'turn_started', turnId: 't1' }],
    ['15 keys: the fixmap becomes a map16', keys(15)],
    ['16 keys (map16)', keys(16)],
  ];
  const seqs = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER];
  for (const [name, value] of cases) {
    it(`${name}: decodes as the frame with seq, for every width of the number`, () => {
      const encoded = encodeFrame(value);
      for (const seq of seqs) {
        expect(decodeOne(withSeq(encoded, seq)), `seq ${seq}`).toEqual({ ...value, seq });
      }
    });
  }

  it('refuses what is not a map, and numbers that are not safe non-negative integers', () => {
    expect(() => withSeq(encodeFrame([1, 2]), 1)).toThrow(/not a map/);
    expect(() => withSeq(encodeFrame({ a: 1 }), -1)).toThrow(RangeError);
    expect(() => withSeq(encodeFrame({ a: 1 }), 1.5)).toThrow(RangeError);
  });
});

/**
 * A frame whose `text` counts how often it is read: checking it as `frameProblem` does (schema, plain
 * data, encoded size) reads it a fixed number of times, and every further encoding once more.
 */
function countingMessage(): { frame: AppFrame; reads(): number } {
  let reads = 0;
  const frame = {
    type: 'user_message',
    inboundId: 'in-1',
    route: { chatId: 1 },
    telegramMessageId: 5,
    sender: { id: 7, name: 'Ann' },
    attachments: [],
    sentAt: 1,
  } as Record<string, unknown>;
  Object.defineProperty(frame, 'text', {
    enumerable: true,
    get() {
      reads++;
      return 'hello';
    },
  });
  return { frame: frame as unknown as AppFrame, reads: () => reads };
}

describe('the sender encodes each frame once', () => {
  it('a reliable frame sent on a live connection is encoded once, and arrives numbered', async () => {
    const gateway = side();
    const bridge = side();
    const link = memoryLink(gateway, bridge);
    await waitFor(() => link.gateway.ready && link.bridge.ready);
    const { frame, reads } = countingMessage();
    const checkOnly = countingMessage();
    expect(frameProblem(checkOnly.frame), 'the counting frame must be valid').toBeUndefined();
    const readsToCheck = checkOnly.reads();
    await link.send('gateway', frame);
    await waitFor(() => bridge.received.length === 1);
    expect(reads() - readsToCheck, 'encodings of one sent frame').toBe(0);
    expect(bridge.received[0]).toMatchObject({ type: 'user_message', text: 'hello', seq: 1 });
    link.close();
  });
});

describe('a frame checked before it is sent is encoded once in all', () => {
  it('frameProblem then send (the gateway checks a user message before storing it): the send reads nothing again', async () => {
    const gateway = side();
    const bridge = side();
    const link = memoryLink(gateway, bridge);
    await waitFor(() => link.gateway.ready && link.bridge.ready);
    const { frame, reads } = countingMessage();
    expect(frameProblem(frame)).toBeUndefined();
    const readsToCheck = reads();
    await link.send('gateway', frame);
    await waitFor(() => bridge.received.length === 1);
    expect(reads() - readsToCheck, 'reads of the frame by its send, after its check').toBe(0);
    expect(bridge.received[0]).toMatchObject({ type: 'user_message', text: 'hello', seq: 1 });
    // The check's encoding is used once: a second send of the same object checks it again.
    await link.send('gateway', frame);
    await waitFor(() => bridge.received.length === 2);
    expect(reads() - readsToCheck, 'a second send checks and encodes anew').toBe(readsToCheck);
    link.close();
  });
});
