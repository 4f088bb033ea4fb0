/**
 * The rules of a file transfer (`common/transfer/`), as tables on a manual clock: the sender's window,
 * its restart from what the receiver holds after a dropped link or a silence, its one verdict; the
 * receiver's answers to offers and chunks from what its disk holds.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/common/clock.js';
import { answerChunk, answerOffer } from '../src/common/transfer/receive.js';
import {
  type SendEvent,
  type SendStep,
  startSend,
  stepSend,
  type TransferLimits,
} from '../src/common/transfer/send.js';

const limits: TransferLimits = { chunkBytes: 10, windowChunks: 2, stallMs: 1_000, maxAttempts: 2 };
const SHA = 'a'.repeat(64);

/** Runs `events` from a fresh 35-byte transfer, each `after` ms after the one before; returns every step. */
function run(events: Array<SendEvent & { after?: number }>, connected = true): SendStep[] {
  const clock = new ManualClock(1_000);
  let step = startSend(35, connected, clock.now(), limits);
  const steps = [step];
  for (const { after, ...event } of events) {
    clock.advance(after ?? 0);
    step = stepSend(step.state, event as SendEvent, clock.now(), limits);
    steps.push(step);
  }
  return steps;
}
const actionsOf = (steps: SendStep[]) => steps.map((s) => s.actions);

describe('sending a file', () => {
  it('offers first, then keeps at most the window in flight, sliding as acks come', () => {
    const steps = run([
      { kind: 'ack', received: 0 },
      { kind: 'ack', received: 10 },
      { kind: 'ack', received: 20 },
      { kind: 'ack', received: 30 },
      { kind: 'ack', received: 35 },
      { kind: 'done', ok: true, path: '/far/f' },
    ]);
    expect(actionsOf(steps)).toEqual([
      [{ kind: 'offer' }],
      [
        { kind: 'chunk', offset: 0, length: 10 },
        { kind: 'chunk', offset: 10, length: 10 },
      ],
      [{ kind: 'chunk', offset: 20, length: 10 }],
      [{ kind: 'chunk', offset: 30, length: 5 }],
      [],
      [],
      [{ kind: 'finish', ok: true, path: '/far/f' }],
    ]);
    expect(steps.at(-1)?.wakeAt).toBeUndefined();
  });

  it('resumes from what the receiver says it holds: an offer answered with 20 sends from 20', () => {
    const steps = run([{ kind: 'ack', received: 20 }]);
    expect(steps[1]?.actions).toEqual([
      { kind: 'chunk', offset: 20, length: 10 },
      { kind: 'chunk', offset: 30, length: 5 },
    ]);
  });

  it('waits for the link, and after a drop offers again and resends from the last acknowledged byte', () => {
    const steps = run(
      [
        { kind: 'link', up: true },
        { kind: 'ack', received: 0 },
        { kind: 'ack', received: 10 },
        { kind: 'link', up: false },
        { kind: 'link', up: true },
        { kind: 'ack', received: 10 },
      ],
      false,
    );
    expect(actionsOf(steps)).toEqual([
      [],
      [{ kind: 'offer' }],
      [
        { kind: 'chunk', offset: 0, length: 10 },
        { kind: 'chunk', offset: 10, length: 10 },
      ],
      [{ kind: 'chunk', offset: 20, length: 10 }],
      // Chunks 10..30 were in flight when the link dropped: forgotten, not counted as sent.
      [],
      [{ kind: 'offer' }],
      [
        { kind: 'chunk', offset: 10, length: 10 },
        { kind: 'chunk', offset: 20, length: 10 },
      ],
    ]);
    // No stall timer while the link is down.
    expect(steps[0]?.wakeAt).toBeUndefined();
    expect(steps[4]?.wakeAt).toBeUndefined();
  });

  it('offers again after a silence of stallMs while connected, not before', () => {
    const steps = run([
      { kind: 'ack', received: 0 },
      { kind: 'tick', after: 999 },
      { kind: 'tick', after: 1 },
    ]);
    expect(steps[1]?.wakeAt).toBe(2_000);
    expect(steps[2]?.actions).toEqual([]);
    expect(steps[3]?.actions).toEqual([{ kind: 'offer' }]);
    expect(steps[3]?.wakeAt).toBe(3_000);
  });

  it('starts over from nothing when the receiver lost its part (an ack below the last one)', () => {
    const steps = run([
      { kind: 'ack', received: 0 },
      { kind: 'ack', received: 20 },
      { kind: 'ack', received: 0 },
    ]);
    expect(steps[3]?.actions).toEqual([
      { kind: 'chunk', offset: 0, length: 10 },
      { kind: 'chunk', offset: 10, length: 10 },
    ]);
  });

  it('offers again after a checksum mismatch, at most maxAttempts times, then fails once', () => {
    const mismatch = { kind: 'done', ok: false, error: 'checksum', retry: true } as const;
    const steps = run([{ kind: 'ack', received: 0 }, mismatch, mismatch, { kind: 'ack', received: 0 }]);
    expect(actionsOf(steps).slice(2)).toEqual([
      [{ kind: 'offer' }],
      [{ kind: 'finish', ok: false, error: 'checksum' }],
      [],
    ]);
  });

  it('ends at the first verdict: a refusal is final, and nothing after it acts', () => {
    const steps = run([
      { kind: 'done', ok: false, error: 'too big', retry: false },
      { kind: 'done', ok: true, path: '/far/f' },
      { kind: 'link', up: true },
      { kind: 'tick', after: 5_000 },
    ]);
    expect(actionsOf(steps).slice(1)).toEqual([
      [{ kind: 'finish', ok: false, error: 'too big' }],
      [],
      [],
      [],
    ]);
  });
});

describe('receiving a file', () => {
  it.each([
    ['over the cap', { size: 101, sha256: SHA }, { partBytes: 0 }, 'refuse'],
    [
      'whole already, same checksum',
      { size: 50, sha256: SHA },
      { whole: { size: 50, sha256: SHA }, partBytes: 0 },
      'have',
    ],
    [
      'another file under the name',
      { size: 50, sha256: SHA },
      { whole: { size: 50, sha256: 'b'.repeat(64) }, partBytes: 0 },
      'refuse',
    ],
    [
      'another size under the name',
      { size: 50, sha256: SHA },
      { whole: { size: 7 }, partBytes: 0 },
      'refuse',
    ],
    ['a part to resume', { size: 50, sha256: SHA }, { partBytes: 30 }, 'resume 30'],
    ['a part longer than the file', { size: 50, sha256: SHA }, { partBytes: 60 }, 'resume 0'],
    [
      'every byte in the part (a crash before naming)',
      { size: 50, sha256: SHA },
      { partBytes: 50 },
      'resume 50 whole',
    ],
    ['an empty file', { size: 0, sha256: SHA }, { partBytes: 0 }, 'resume 0 whole'],
  ] as const)('answers an offer: %s', (_, offer, disk, expected) => {
    const answer = answerOffer(offer, disk, 100);
    const said =
      answer.kind === 'resume' ? `resume ${answer.from}${answer.whole ? ' whole' : ''}` : answer.kind;
    expect(said).toBe(expected);
    if (answer.kind === 'refuse')
      expect(answer.error).toMatch(
        offer.size > 100 ? /101 bytes, over the 100-byte limit/ : /another file of that name/,
      );
  });

  it.each([
    ['the next bytes', { offset: 20, length: 10 }, 20, { kind: 'append', received: 30, whole: false }],
    ['the last bytes', { offset: 40, length: 10 }, 40, { kind: 'append', received: 50, whole: true }],
    ['a resent chunk already written', { offset: 10, length: 10 }, 20, { kind: 'skip', received: 20 }],
    ['a chunk past a gap', { offset: 30, length: 10 }, 20, { kind: 'skip', received: 20 }],
    ['bytes past the offered size', { offset: 40, length: 20 }, 40, { kind: 'refuse' }],
  ] as const)('answers a chunk: %s', (_, chunk, partBytes, expected) => {
    expect(answerChunk(chunk, 50, partBytes)).toMatchObject(expected);
  });
});
