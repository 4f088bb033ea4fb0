/**
 * Conversations against the real CLI: every chat and forum topic is its own Claude session. Two at once
 * each answered in its own place with only its own words in the model's requests; the process cap
 * (`maxLiveSessions`) stopping the least recently used idle session and resuming it later with its
 * context; a conversation waiting while every process is busy, then served; `shared` mode keeping a
 * second chat's message out of the running turn; and a bridge killed with SIGKILL while three sessions
 * stream, every one adopted and finished once.
 */

import { readFileSync } from 'node:fs';
import type { AppFrame, FrameOf, Route } from '@switchyard/protocol';
import { hang, rule, say } from '@switchyard/sandbox';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Bridge, createBridge, recordedProcesses } from '../../packages/agent-bridge/src/index.js';
import { type BridgeProcess, buildBridge, duplicates, startBridge } from './bridge-process.js';
import { bridgeOptions, createRig, type Rig, userMessage } from './harness.js';

const sleepMs = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Whether `pid` no longer runs: no such process, or a zombie (dead, waiting for its parent). */
const exited = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
};
const STORY = (word: string): string =>
  `The ${word} story goes on and on, slowly, one piece at a time. `.repeat(3);

/** A user message in `route` (a chat, or a topic of one). */
function messageIn(route: Route, inboundId: string, text: string): FrameOf<'user_message'> {
  return { ...userMessage(inboundId, text, route.chatId), route };
}

/** The text of every Messages request the model received, as one string per request. */
function requestTexts(rig: Rig): string[] {
  return rig.model.messageRequests().map((r) => JSON.stringify(r.body));
}

const A: Route = { chatId: 101 };
const B: Route = { chatId: -100500, threadId: 7 };
const C: Route = { chatId: 103 };

describe('conversations', () => {
  let rig: Rig | undefined;
  let bridge: Bridge | undefined;
  let proc: BridgeProcess | undefined;

  beforeAll(() => buildBridge(), 60_000);

  afterEach(async () => {
    await bridge?.stop('shutdown');
    bridge = undefined;
    await proc?.kill();
    proc = undefined;
    await rig?.cleanup();
    rig = undefined;
  });

  const turnOf = (r: Rig, inboundId: string, since = 0): Promise<FrameOf<'turn_started'>> =>
    r.waitFor(
      (f): f is FrameOf<'turn_started'> => f.type === 'turn_started' && f.inboundIds.includes(inboundId),
      60_000,
      since,
    );
  const endOf = (r: Rig, turnId: string): Promise<FrameOf<'turn_ended'>> =>
    r.waitFor((f): f is FrameOf<'turn_ended'> => f.type === 'turn_ended' && f.turnId === turnId, 60_000);
  const textOf = (r: Rig, turnId: string): string =>
    r
      .of('text')
      .filter((f) => f.turnId === turnId)
      .map((f) => f.text)
      .join('');

  it('two conversations at once: each its own process, turn and answer, and only its own words in the model', async () => {
    rig = await createRig([
      rule('alpha', say(STORY('alpha'), { chunkSize: 8, chunkDelayMs: 10 })),
      rule('beta', say(STORY('beta'), { chunkSize: 8, chunkDelayMs: 10 })),
    ]);
    bridge = createBridge(bridgeOptions(rig));
    await bridge.start();
    await rig.send(messageIn(A, 'a1', 'tell the alpha story'));
    await rig.send(messageIn(B, 'b1', 'tell the beta story'));
    const [ta, tb] = await Promise.all([turnOf(rig, 'a1'), turnOf(rig, 'b1')]);
    expect(ta.route).toEqual(A);
    expect(tb.route).toEqual(B);
    expect(ta.turnId).not.toBe(tb.turnId);
    // Both stream before either ends: they run side by side, not one after the other.
    await rig.waitFor((f) => f.type === 'text_delta' && f.turnId === ta.turnId, 60_000);
    await rig.waitFor((f) => f.type === 'text_delta' && f.turnId === tb.turnId, 60_000);
    const [ea, eb] = await Promise.all([endOf(rig, ta.turnId), endOf(rig, tb.turnId)]);
    expect(ea.outcome).toBe('success');
    expect(eb.outcome).toBe('success');
    expect(textOf(rig, ta.turnId)).toBe(STORY('alpha'));
    expect(textOf(rig, tb.turnId)).toBe(STORY('beta'));
    // No message of one conversation was taken into the other's turn.
    for (const taken of rig.of('message_taken')) {
      expect(taken.inboundIds).toEqual(taken.turnId === ta.turnId ? ['a1'] : ['b1']);
    }
    const texts = requestTexts(rig).filter((t) => t.includes('story'));
    expect(texts.length).toBeGreaterThanOrEqual(2);
    for (const text of texts) expect(text.includes('alpha') && text.includes('beta')).toBe(false);
    const pids = new Set(recordedProcesses(rig.stateDir).map((p) => p.record.pid));
    expect(pids.size).toBe(2);
    expect(bridge.status().sessions.map((s) => s.route)).toEqual(expect.arrayContaining([A, B]));
  }, 90_000);

  it('the cap: a third conversation stops the least recently used idle one, which resumes later with its context', async () => {
    rig = await createRig([rule('what was my first word', say('Your first word was remembered.'))]);
    bridge = createBridge(bridgeOptions(rig, { maxLiveSessions: 2 }));
    await bridge.start();
    const r = rig;
    const ask = async (route: Route, id: string, text: string) => {
      const since = r.frames.length;
      await r.send(messageIn(route, id, text));
      const turn = await turnOf(r, id, since);
      expect(await endOf(r, turn.turnId)).toMatchObject({ outcome: 'success' });
      return turn;
    };
    await ask(A, 'a1', 'pineapple');
    await ask(B, 'b1', 'walnut');
    const pidA = bridge.status().sessions.find((s) => s.route.chatId === A.chatId)?.pid;
    expect(pidA).toBeDefined();
    await ask(C, 'c1', 'hello from C');
    // A (least recently used, idle) was stopped to make room; B and C are live.
    const live = () =>
      bridge
        ?.status()
        .sessions.filter((s) => s.live)
        .map((s) => s.route.chatId)
        .sort() ?? [];
    expect(live()).toEqual([B.chatId, C.chatId].sort());
    // A's next message resumes its session (--resume): the model sees its first message again.
    const since = r.model.messageRequests().length;
    await ask(A, 'a2', 'what was my first word');
    const resumed = r.model
      .messageRequests()
      .slice(since)
      .map((q) => JSON.stringify(q.body))
      .find((t) => t.includes('what was my first word'));
    expect(resumed).toContain('pineapple');
    expect(resumed).not.toContain('walnut');
    expect(bridge.status().sessions.find((s) => s.route.chatId === A.chatId)?.pid).not.toBe(pidA);
    expect(live()).toHaveLength(2);
  }, 120_000);

  it('a message for a conversation whose process is being stopped for a slot waits for it to be gone, then is answered by a new one', async () => {
    // The race this pins down: the eviction's stop is not awaited, so the evicted conversation's next
    // message opened a new object that adopted the still-running, still-recorded process; it took the
    // message and died with it (EPIPE), and the message was never answered.
    rig = await createRig([]);
    bridge = createBridge(bridgeOptions(rig, { maxLiveSessions: 2 }));
    await bridge.start();
    const r = rig;
    const ask = async (route: Route, id: string, text: string) => {
      const since = r.frames.length;
      await r.send(messageIn(route, id, text));
      const turn = await turnOf(r, id, since);
      expect(await endOf(r, turn.turnId)).toMatchObject({ outcome: 'success' });
    };
    await ask(A, 'a1', 'first in A');
    await ask(B, 'b1', 'first in B');
    const pidA = bridge.status().sessions.find((s) => s.route.chatId === A.chatId)?.pid;
    const since = r.frames.length;
    // C evicts A; A's next message arrives while A's process is still being stopped.
    await Promise.all([r.send(messageIn(C, 'c1', 'first in C')), r.send(messageIn(A, 'a2', 'back in A'))]);
    const turn = await turnOf(r, 'a2', since);
    expect(await endOf(r, turn.turnId)).toMatchObject({ outcome: 'success' });
    expect(r.frames.slice(since).some((f) => f.type === 'operator_event')).toBe(false);
    expect(bridge.status().sessions.find((s) => s.route.chatId === A.chatId)?.pid).not.toBe(pidA);
  }, 120_000);

  it('an idle session stops after idleStopMs and resumes at its next message; its cost adds up across processes', async () => {
    rig = await createRig([rule('what came first', say('Mango came first.'))]);
    bridge = createBridge(bridgeOptions(rig, { idleStopMs: 1500 }));
    await bridge.start();
    const r = rig;
    await r.send(messageIn(A, 'a1', 'mango'));
    const first = await turnOf(r, 'a1');
    const end1 = await endOf(r, first.turnId);
    const pid = recordedProcesses(r.stateDir)[0]?.record.pid;
    expect(pid).toBeDefined();
    // Idle past the limit: the process is stopped and its record cleared; the conversation is kept.
    const deadline = Date.now() + 15_000;
    while (recordedProcesses(r.stateDir).length > 0 && Date.now() < deadline) await sleepMs(100);
    expect(recordedProcesses(r.stateDir)).toEqual([]);
    // Gone, or a zombie its parent has not reaped yet (this test process, late under load): either way,
    // no longer running. The record may be cleared an instant before the exit is complete.
    while (!exited(pid as number) && Date.now() < deadline) await sleepMs(50);
    expect(exited(pid as number)).toBe(true);
    const since = r.model.messageRequests().length;
    await r.send(messageIn(A, 'a2', 'what came first'));
    const second = await turnOf(r, 'a2');
    const end2 = await endOf(r, second.turnId);
    expect(textOf(r, second.turnId)).toBe('Mango came first.');
    const resumed = r.model
      .messageRequests()
      .slice(since)
      .map((q) => JSON.stringify(q.body))
      .find((t) => t.includes('what came first'));
    expect(resumed).toContain('mango');
    // Each turn's cost is its own; the conversation's total counts both, though the CLI's own
    // cumulative figure started again at zero in the resumed process.
    expect(end1.costUsd).toBeGreaterThan(0);
    expect(end2.costUsd).toBeGreaterThan(0);
    expect(end1.sessionCostUsd).toBeCloseTo(end1.costUsd as number, 10);
    expect(end2.sessionCostUsd).toBeCloseTo((end1.costUsd as number) + (end2.costUsd as number), 10);
  }, 90_000);

  it('every process busy: a new conversation waits (and is told), then is served when one is free', async () => {
    rig = await createRig([rule('block', hang()), rule('quick', say('Quick answer.'))]);
    bridge = createBridge(bridgeOptions(rig, { maxLiveSessions: 1 }));
    await bridge.start();
    await rig.send(messageIn(A, 'a1', 'block here'));
    const blocking = await turnOf(rig, 'a1');
    await rig.send(messageIn(C, 'c1', 'quick please'));
    const waiting = await rig.waitFor((f) => f.type === 'session_waiting', 30_000);
    expect(waiting).toMatchObject({ route: C, inboundIds: ['c1'], position: 0 });
    expect(rig.of('turn_started').filter((f) => f.inboundIds.includes('c1'))).toEqual([]);
    // Ending A's turn frees its process for eviction; C is served.
    await rig.send({ type: 'interrupt', commandId: 'stop-a', route: A });
    await endOf(rig, blocking.turnId);
    const served = await turnOf(rig, 'c1');
    expect(served.route).toEqual(C);
    expect(await endOf(rig, served.turnId)).toMatchObject({ outcome: 'success' });
    expect(textOf(rig, served.turnId)).toBe('Quick answer.');
  }, 90_000);

  it('shared: one session for the agent, but a second chat waits for the running turn instead of joining it', async () => {
    rig = await createRig([
      rule('slow', say(STORY('slow'), { chunkSize: 8, chunkDelayMs: 10 })),
      rule('other chat', say('Answer for the other chat.')),
    ]);
    bridge = createBridge(bridgeOptions(rig, { conversations: 'shared' }));
    await bridge.start();
    await rig.send(messageIn(A, 'a1', 'slow one'));
    const first = await turnOf(rig, 'a1');
    await rig.waitFor((f) => f.type === 'text_delta', 30_000);
    await rig.send(messageIn(C, 'c1', 'from the other chat'));
    const second = await turnOf(rig, 'c1');
    // Opened only after the first turn ended, as its own turn, answered in its own chat.
    const ends = rig.frames.map((f, i) => ({ f, i }));
    const endA = ends.find(({ f }) => f.type === 'turn_ended' && f.turnId === first.turnId)?.i ?? -1;
    const startC = ends.find(({ f }) => f.type === 'turn_started' && f.turnId === second.turnId)?.i ?? -1;
    expect(endA).toBeGreaterThanOrEqual(0);
    expect(startC).toBeGreaterThan(endA);
    expect(second.route).toEqual(C);
    expect(second.turnId).not.toBe(first.turnId);
    expect(
      rig.of('message_taken').find((f) => f.turnId === first.turnId && f.inboundIds.includes('c1')),
    ).toBe(undefined);
    await endOf(rig, second.turnId);
    expect(new Set(recordedProcesses(rig.stateDir).map((p) => p.record.pid)).size).toBe(1);
  }, 90_000);

  it('kill -9 of the bridge while three sessions stream: all three adopted, each turn finished once', async () => {
    rig = await createRig([
      rule('one', say(STORY('one'), { chunkSize: 6, chunkDelayMs: 20 })),
      rule('two', say(STORY('two'), { chunkSize: 6, chunkDelayMs: 20 })),
      rule('three', say(STORY('three'), { chunkSize: 6, chunkDelayMs: 20 })),
    ]);
    proc = await startBridge(rig);
    const routes = [A, B, C];
    const words = ['one', 'two', 'three'];
    for (const [i, route] of routes.entries()) await rig.send(messageIn(route, `m${i}`, `story ${words[i]}`));
    const turns = await Promise.all(routes.map((_, i) => turnOf(rig as Rig, `m${i}`)));
    for (const turn of turns) {
      await rig.waitFor((f) => f.type === 'text_delta' && f.turnId === turn.turnId, 60_000);
    }
    const before = new Set(recordedProcesses(rig.stateDir).map((p) => p.record.pid));
    expect(before.size).toBe(3);
    await proc.kill();
    proc = await startBridge(rig);
    const ends = await Promise.all(turns.map((t) => endOf(rig as Rig, t.turnId)));
    for (const end of ends) expect(end.outcome).toBe('success');
    for (const [i, turn] of turns.entries()) {
      expect(textOf(rig as Rig, turn.turnId)).toBe(STORY(words[i] as string));
    }
    expect(new Set(recordedProcesses(rig.stateDir).map((p) => p.record.pid))).toEqual(before);
    expect(duplicates(rig.frames as AppFrame[])).toEqual([]);
    expect(rig.of('turn_started')).toHaveLength(3);
    expect(rig.of('turn_ended')).toHaveLength(3);
  }, 120_000);
});
