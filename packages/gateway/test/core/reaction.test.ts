/**
 * The fallback marker of a chat that refuses reactions (`core/turns/reaction.ts`), as a table: the states a
 * burst's messages go through, one marker covering them (never one message per message), the text it
 * shows after each step, and a new marker only for the next run of messages that must wait.
 */
import { describe, expect, it } from 'vitest';
import {
  type LaneMarker,
  markerStep,
  markerText,
  type ReactionState,
} from '../../src/core/turns/reaction.js';

/** Feeds `steps` (message id, state) and records the marker's text after each, and the markers opened. */
function run(steps: readonly [number, ReactionState][]): { texts: (string | undefined)[]; opened: number } {
  let marker: LaneMarker | undefined;
  let opened = 0;
  const texts: (string | undefined)[] = [];
  for (const [id, state] of steps) {
    const step = markerStep(marker, id, state);
    marker = step.marker;
    if (step.opened) opened++;
    texts.push(marker && markerText(marker));
  }
  return { texts, opened };
}

describe('the fallback marker', () => {
  it('a lone message read at once needs none: typing and the answer say it', () => {
    expect(
      run([
        [1, 'reading'],
        [1, 'read'],
      ]),
    ).toEqual({ texts: [undefined, undefined], opened: 0 });
  });

  it('a burst during a turn: one marker for all of it, edited through every state', () => {
    const { texts, opened } = run([
      [1, 'reading'],
      [2, 'waiting'],
      [3, 'waiting'],
      [2, 'reading'],
      [3, 'read'],
      [2, 'read'],
    ]);
    expect(opened).toBe(1);
    expect(texts).toEqual([
      undefined,
      '👀 waiting: 1 message',
      '👀 waiting: 2 messages',
      '👀 waiting: 1 message · ✍ being read: 1 message',
      '✍ being read: 1 message · 👌 read: 1 message',
      '👌 read: 2 messages',
    ]);
  });

  it('between turns: a marker whose messages are all read is done; the next wait opens the next one', () => {
    const { texts, opened } = run([
      [2, 'waiting'],
      [2, 'read'],
      [5, 'waiting'],
      [5, 'reading'],
      [6, 'waiting'],
    ]);
    expect(opened).toBe(2);
    expect(texts).toEqual([
      '👀 waiting: 1 message',
      '👌 read: 1 message',
      '👀 waiting: 1 message',
      '✍ being read: 1 message',
      '👀 waiting: 1 message · ✍ being read: 1 message',
    ]);
  });
});
