/**
 * Delivery changes the conversation's snapshot only through its port (`conversation-record.ts`): the
 * snapshot a conversation persists is written by the conversation alone. Driven here on a plain
 * snapshot, a real session machine, a stand-in process and a manual clock; no process, no file.
 */
import { type AppFrame, ManualClock, type PeerCursor, silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { Session } from '../src/core/session/session.js';
import { initialSessionState } from '../src/core/session/state.js';
import { Delivery } from '../src/io/delivery/delivery.js';
import { deliveryRecordOf, processRecordOf } from '../src/io/session/conversation-record.js';
import type { Snapshot } from '../src/io/session/snapshot.js';
import { userMessage } from './frames.js';

const initialSnapshot = (): Snapshot => ({
  version: 1,
  stdoutOffset: 0,
  session: initialSessionState(),
  delivered: [],
  exits: [],
});

function setUp(options: { commitFails?: () => boolean } = {}) {
  const snapshot: Snapshot = initialSnapshot();
  const session = new Session(snapshot.session, { idPrefix: 'c/' });
  session.processStarted();
  const lines: string[] = [];
  const persisted: Snapshot[] = [];
  const frames: AppFrame[] = [];
  /** Each durable write: the snapshot, the frames sent by then, the cursor, and the lines written by then. */
  const commits: { snapshot: Snapshot; frames: number; cursor?: PeerCursor; lines: number }[] = [];
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
      commit: (work, cursor, durable) => {
        work();
        if (options.commitFails?.()) throw new Error('ENOSPC: no space left on device');
        commits.push({
          snapshot: structuredClone(snapshot),
          frames: frames.length,
          lines: lines.length,
          ...(cursor ? { cursor } : {}),
        });
        // On disk: the line goes in here, before the frames would reach the socket.
        durable?.();
      },
      pump: () => {},
    },
  );
  return { snapshot, session, delivery, lines, persisted, frames, commits };
}

describe('delivery through the conversation’s record port', () => {
  it('a message: one durable write before the line — key, intent, its frames and the cursor — the intent gone after', () => {
    const { snapshot, session, delivery, lines, commits, frames } = setUp();
    const message = userMessage('m1', 'hello');
    const cursor = { streamId: 'gateway-stream', lastSeen: 7 };
    delivery.deliverMessage(message, session.acceptUserMessage(message, 1000), { cursor });
    expect(lines).toHaveLength(1);
    expect(commits).toHaveLength(1); // one durable write for the message
    const [commit] = commits;
    expect(commit?.lines).toBe(0); // before the line went in
    expect(commit?.snapshot.intent?.key).toBe('in:m1');
    expect(commit?.snapshot.delivered).toEqual(['in:m1']);
    expect(commit?.frames).toBe(frames.length); // every frame it announces, in the same write
    expect(frames.length).toBeGreaterThan(0);
    expect(commit?.cursor).toEqual(cursor);
    expect(snapshot.intent).toBeUndefined();
    expect(delivery.delivered('in:m1')).toBe(true);
  });

  it('a durable write that fails leaves nothing behind: not delivered, no intent, nothing written; the retry delivers', () => {
    let fail = true;
    const { snapshot, session, delivery, lines, commits } = setUp({ commitFails: () => fail });
    const message = userMessage('m1', 'hello');
    expect(() => delivery.deliverMessage(message, session.acceptUserMessage(message, 1000))).toThrow(
      /ENOSPC/,
    );
    expect([lines.length, commits.length, snapshot.intent, delivery.delivered('in:m1')]).toEqual([
      0,
      0,
      undefined,
      false,
    ]);
    fail = false;
    delivery.deliverMessage(message, { frames: [], writes: [] });
    expect([lines.length, commits.length, delivery.delivered('in:m1')]).toEqual([1, 1, true]);
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
