/**
 * The usage limit's timer (`io/session/limit-wait.ts`) over the session machine fed the recorded
 * `usage-limit-oauth` stdout, on a manual clock: nothing happens before the reset; at it the CLI is told
 * to go on (nothing held) or the held messages are written instead; a bridge restarted during the wait
 * arms the timer again from the restored state.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AppFrame, ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { LIMIT_RESET_TEXT } from '../src/core/session/limit.js';
import { Session } from '../src/core/session/session.js';
import { translateLine } from '../src/core/translate/translator.js';
import { createLimitWait } from '../src/io/session/limit-wait.js';
import { userMessage } from './frames.js';

const RESET = 1_796_201_748_000;
const lines = readFileSync(join(import.meta.dirname, 'fixtures', 'usage-limit-oauth.stdout.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .slice(0, 5);

/** A session whose one turn the limit refused, as the fixture recorded it. */
function limitedSession(): Session {
  const session = new Session();
  session.processStarted();
  session.acceptUserMessage(userMessage('in-1', 'first question'), 1);
  for (const line of lines) session.onEvents(translateLine(line), 2);
  return session;
}

function harness(session: Session, clock: ManualClock, held = false) {
  const written: string[] = [];
  const frames: AppFrame[] = [];
  const events: string[] = [];
  const wait = createLimitWait({
    session,
    delivery: {
      get holding() {
        return held;
      },
      releaseHeld: () => events.push('release'),
    },
    supervisor: { writeAll: (lines: readonly string[]) => written.push(...lines) },
    emit: (out) => frames.push(...out),
    persist: (force) => events.push(`persist:${force}`),
    clock,
  });
  return { wait, written, frames, events };
}

describe('the usage limit’s timer', () => {
  it('fires at the reset: the CLI is told to go on, the wait is over, the snapshot saved, held items released', () => {
    const clock = new ManualClock(RESET - 60_000);
    const session = limitedSession();
    const { wait, written, frames, events } = harness(session, clock);
    wait.arm();
    wait.arm(); // armed once, however often the loop asks
    expect(clock.pending).toBe(1);
    clock.advance(59_999);
    expect(written).toEqual([]);
    clock.advance(1);
    expect(written.map((w) => JSON.parse(w).message.content)).toEqual([LIMIT_RESET_TEXT]);
    expect(frames[0]).toMatchObject({ type: 'usage_limit', state: 'resumed', resetsAt: RESET });
    expect(events).toEqual(['persist:true', 'release']);
    expect(session.limited).toBe(false);
    expect(clock.pending).toBe(0);
  });

  it('with messages held during the wait, they are what goes in: no "go on" line', () => {
    const clock = new ManualClock(RESET - 1000);
    const { wait, written, events } = harness(limitedSession(), clock, true);
    wait.arm();
    clock.advance(1000);
    expect(written).toEqual([]);
    expect(events).toContain('release');
  });

  it('a bridge restarted during the wait arms the timer again from the restored state', () => {
    const clock = new ManualClock(RESET - 5000);
    const restored = new Session(JSON.parse(JSON.stringify(limitedSession().state)));
    expect(restored.limitedUntil).toBe(RESET);
    const { wait, written } = harness(restored, clock);
    wait.arm();
    clock.advance(5000);
    expect(written).toHaveLength(1);
  });

  it('stopped, it fires no more', () => {
    const clock = new ManualClock(RESET - 1000);
    const { wait, written } = harness(limitedSession(), clock);
    wait.arm();
    wait.stop();
    clock.advance(5000);
    expect(written).toEqual([]);
    expect(clock.pending).toBe(0);
  });
});
