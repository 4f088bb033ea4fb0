/**
 * What the bridge checks before a user's message goes into the CLI, each once: the process's liveness
 * is asked once per write (the answer `beforeWrite` read is what `writable` uses), and a message the
 * gateway sends again is written once. Driven on the command handler with a real session machine and
 * delivery, a stand-in process that counts its liveness reads, and a manual clock; no process, no file.
 */
import { type AppFrame, ManualClock, silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { Session } from '../src/core/session/session.js';
import { initialSessionState } from '../src/core/session/state.js';
import { Delivery } from '../src/io/delivery/delivery.js';
import type { ChildHandle, Liveness } from '../src/io/process/child.js';
import { createCommandHandler } from '../src/io/session/commands.js';
import { deliveryRecordOf } from '../src/io/session/conversation-record.js';
import type { Snapshot } from '../src/io/session/snapshot.js';
import { userMessage } from './frames.js';

function setUp(state: Liveness = 'alive') {
  const snapshot: Snapshot = {
    version: 1,
    stdoutOffset: 0,
    session: initialSessionState(),
    delivered: [],
    exits: [],
  };
  const clock = new ManualClock(1000);
  const session = new Session(snapshot.session, { idPrefix: 'c/' });
  session.processStarted();
  const lines: string[] = [];
  const frames: AppFrame[] = [];
  let livenessReads = 0;
  /** The stand-in process's liveness, read as the real one is: each call is one read of `/proc`. */
  const readLiveness = (): Liveness => {
    livenessReads++;
    return state;
  };
  const child = { record: { pid: 1, startTime: '1', startedAt: 1 } } as unknown as ChildHandle;
  const supervisor = {
    child,
    unknown: false,
    detail: undefined,
    pid: () => 1,
    ensure: () => true,
    writable: (known?: Liveness) => (known ?? readLiveness()) === 'alive',
    writeLine: (line: string) => void lines.push(line),
    writeAll: (more: readonly string[]) => void lines.push(...more),
    noteActivity: () => {},
  };
  const delivery = new Delivery(
    { log: silentLogger, clock },
    {
      record: deliveryRecordOf(() => snapshot),
      session,
      supervisor,
      emit: (out) => void frames.push(...out),
      persist: () => {},
      commit: (work, _cursor, durable) => {
        work();
        durable?.();
      },
      pump: () => {},
    },
  );
  const handle = createCommandHandler({
    session,
    supervisor,
    delivery,
    history: { entries: [], rescan: () => {} },
    emit: (out) => void frames.push(...out),
    clock,
    shared: false,
    beforeWrite: () => readLiveness(),
    rename: () => {},
  });
  return { handle, lines, livenessReads: () => livenessReads };
}

describe('before a write', () => {
  it('asks the process’s liveness once per message written', async () => {
    const { handle, lines, livenessReads } = setUp();
    await handle(userMessage('m1', 'hello'));
    expect(lines).toHaveLength(1);
    expect(livenessReads()).toBe(1);
    await handle(userMessage('m2', 'and again'));
    expect(lines).toHaveLength(2);
    expect(livenessReads()).toBe(2);
  });

  it('a message sent again (the gateway resends what it saw no ack for) is written once', async () => {
    const { handle, lines } = setUp();
    const message = userMessage('m1', 'hello');
    await handle(message);
    await handle(message);
    await handle({ ...message, seq: 9 });
    expect(lines).toHaveLength(1);
  });
});
