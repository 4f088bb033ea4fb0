/**
 * Delivery changes the conversation's snapshot only through its port (`conversation-record.ts`): the
 * snapshot a conversation persists is written by the conversation alone. Driven here on a plain
 * snapshot, a real session machine, a stand-in process and a manual clock; no process, no file.
 */
import { type AppFrame, ManualClock, silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { deliveryRecordOf, processRecordOf } from '../src/conversation-record.js';
import { Delivery } from '../src/delivery.js';
import { Session } from '../src/session.js';
import { initialSessionState } from '../src/session-state.js';
import type { Snapshot } from '../src/snapshot.js';
import { userMessage } from './frames.js';

const initialSnapshot = (): Snapshot => ({
  version: 1,
  stdoutOffset: 0,
  session: initialSessionState(),
  delivered: [],
  exits: [],
});

function setUp() {
  const snapshot: Snapshot = initialSnapshot();
  const session = new Session(snapshot.session, { idPrefix: 'c/' });
  session.processStarted();
  const lines: string[] = [];
  const persisted: Snapshot[] = [];
  const frames: AppFrame[] = [];
  const delivery = new Delivery(
    { log: silentLogger, clock: new ManualClock(1000) },
    {
      record: deliveryRecordOf(() => snapshot),
      session,
      supervisor: {
        child: undefined,
        unknown: false,
        writeLine: (line: string) => void lines.push(line),
        writeAll: (more: readonly string[]) => void lines.push(...more),
        noteActivity: () => {},
        writable: () => true,
      },
      emit: (out) => void frames.push(...out),
      persist: () => void persisted.push(structuredClone(snapshot)),
      pump: () => {},
      lastInbound: () => undefined,
    },
  );
  return { snapshot, session, delivery, lines, persisted, frames };
}

describe('delivery through the conversation’s record port', () => {
  it('a message: its key remembered and its intent on disk before the write, the intent gone after', () => {
    const { snapshot, delivery, lines, persisted } = setUp();
    const message = userMessage('m1', 'hello');
    delivery.deliverMessage(message, { frames: [], writes: [] });
    expect(lines).toHaveLength(1);
    expect(persisted[0]?.intent?.key).toBe('in:m1'); // forced save before the line went in
    expect(persisted[0]?.delivered).toEqual(['in:m1']);
    expect(snapshot.intent).toBeUndefined();
    expect(delivery.delivered('in:m1')).toBe(true);
  });

  it('held items leave the snapshot in order as they are written, and the list is gone when empty', () => {
    const { snapshot, session, delivery, lines } = setUp();
    session.acceptUserMessage(userMessage('m0', 'start a turn'), 1000);
    delivery.hold('cmd:c1', { type: 'clear', route: { chatId: 42 }, commandId: 'c1' });
    delivery.hold('in:m2', userMessage('m2', 'after the clear'));
    expect(snapshot.held?.map((h) => h.type)).toEqual(['clear', 'user_message']);
    delivery.releaseHeld(); // a turn runs: the command waits, and the message behind it too
    expect(lines).toHaveLength(0);
    delete session.state.turn;
    delivery.releaseHeld();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('/clear');
    expect(snapshot.held).toBeUndefined();
    expect(snapshot.delivered).toEqual(['cmd:c1', 'in:m2']);
  });

  it('dropped held items are reported and the list cleared', () => {
    const { snapshot, delivery, frames } = setUp();
    delivery.hold('in:m3', userMessage('m3', 'late'));
    delivery.dropHeld('the Claude process exited before it read them');
    expect(snapshot.held).toBeUndefined();
    expect(frames).toContainEqual(expect.objectContaining({ type: 'messages_unread', inboundIds: ['m3'] }));
  });
});

describe('the supervisor’s record port', () => {
  it('records a start, an exit with its window, a crash loop, a retry and a forgotten record', () => {
    const snapshot: Snapshot = { ...initialSnapshot(), stdoutOffset: 77 };
    const record = processRecordOf(() => snapshot);
    record.started({ pid: 10, startTime: '1', startedAt: 5 });
    expect([snapshot.child?.pid, snapshot.stdoutOffset]).toEqual([10, 0]);
    record.exited([1, 2, 3, 4], true);
    expect([snapshot.child, snapshot.exits, record.crashLoop]).toEqual([undefined, [1, 2, 3, 4], true]);
    record.retry();
    expect([snapshot.exits, record.crashLoop]).toEqual([[], false]);
    record.started({ pid: 11, startTime: '2', startedAt: 6 });
    record.forget();
    expect(snapshot.child).toBeUndefined();
  });
});
