/**
 * Exactly once into the CLI across bridge crashes, with the real CLI: the bridge runs as a child process
 * and is killed with SIGKILL at every point of a stdin write — exactly at each stage (`onDeliveryStage`:
 * intent on disk / line in the fifo / frames in the outbox) and at delays after the gateway side saw the
 * frame acknowledged — then started again on the same CLI.
 *
 * Regression pinned down: a steer written just before a crash was written again by the next bridge, and
 * the model got it twice. The old check looked for the message in the transcript, where a content-array
 * steer appears only once the running turn takes it (its `enqueue` line has no content); the steer here
 * is written while the first model call streams, so a bridge restarting before the next call found
 * nothing there. Now the CLI's `command_lifecycle queued` on stdout (the line's uuid) settles it.
 *
 * Each case asserts: the model saw the message exactly once; the gateway side got every reliable frame
 * once; the bridge wrote the line again only when the crash came before the write (its log says so).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as pause } from 'node:timers/promises';
import type { AppFrame } from '@switchyard/protocol';
import { reply, rule, say, text, toolUse } from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryStage } from '../../packages/agent-bridge/src/io/delivery/delivery.js';
import { type BridgeProcess, buildBridge, duplicates, startBridge } from './bridge-process.js';
import { createRig, type Rig, userMessage } from './harness.js';

const STORY = 'A slow answer streams while a second message arrives. '.repeat(3);

/** Where the bridge dies: exactly at a stage of the write, or this long after the acknowledgement. */
type KillPoint = { stage: DeliveryStage } | { afterAckMs: number };

const KILL_POINTS: readonly KillPoint[] = [
  { stage: 'intent_saved' },
  { stage: 'written' },
  { stage: 'announced' },
  { afterAckMs: 0 },
  { afterAckMs: 40 },
  { afterAckMs: 300 },
];

const describePoint = (point: KillPoint): string =>
  'stage' in point ? `at ${point.stage}` : `${point.afterAckMs} ms after the ack`;

/** Occurrences of `needle` in the JSON of a request body. */
const count = (body: unknown, needle: string): number => JSON.stringify(body).split(needle).length - 1;

describe('exactly once into the CLI across bridge kills', () => {
  let rig: Rig;
  let bridge: BridgeProcess | undefined;
  const logs: Record<string, unknown>[] = [];
  const onLog = (entry: Record<string, unknown>): void => {
    logs.push(entry);
  };
  const rewrites = (since: number): number =>
    logs.slice(since).filter((l) => l.msg === 'settled a write from before a crash' && l.rewritten === true)
      .length;
  const settled = (since: number): number =>
    logs.slice(since).filter((l) => l.msg === 'settled a write from before a crash').length;
  const outcome: string[] = [];

  beforeAll(async () => {
    buildBridge();
    rig = await createRig([
      // The first call streams slowly, then a tool runs for 3 s: a steer sent meanwhile is taken at the
      // second call, even when the restarted bridge has to write it again.
      rule(
        'run the slow task',
        reply([text(STORY), toolUse('Bash', { command: 'sleep 3', description: 'Wait' })], {
          chunkSize: 6,
          chunkDelayMs: 15,
        }),
        say('Done, and I saw your extra note.'),
      ),
      rule('plain question', say('A plain answer, streamed.', { chunkSize: 4, chunkDelayMs: 10 })),
    ]);
    bridge = await startBridge(rig, { onLog });
  }, 60_000);

  afterAll(async () => {
    await bridge?.kill();
    await rig?.cleanup();
    if (outcome.length > 0) process.stdout.write(`${outcome.join('\n')}\n`);
  });

  /**
   * Sends `frame` to a bridge that will die at `point`, waits for that, starts the next bridge.
   * Returns the log index from before the kill.
   */
  const sendAndCrash = async (frame: AppFrame & { inboundId: string }, point: KillPoint): Promise<number> => {
    const logsBefore = logs.length;
    if ('stage' in point) {
      // The running bridge has no kill point: swap it for one that has.
      await bridge?.kill();
      bridge = await startBridge(rig, {
        onLog,
        killAt: { stage: point.stage, key: `in:${frame.inboundId}` },
      });
      await rig.send(frame);
      await bridge.exited;
    } else {
      await rig.sendAcked(frame);
      if (point.afterAckMs > 0) await pause(point.afterAckMs);
      await bridge?.kill();
    }
    bridge = await startBridge(rig, { onLog });
    return logsBefore;
  };

  for (const [i, point] of KILL_POINTS.entries()) {
    it(`a steer, bridge killed ${describePoint(point)}: the model gets it once`, async () => {
      const tag = randomUUID().slice(0, 8);
      const steerText = `please also check item ${tag}`;
      const since = rig.frames.length;
      const requestsBefore = rig.model.messageRequests().length;
      if ('stage' in point) {
        // Swap in the bridge with the kill point before the turn starts, so the steer meets it.
        await bridge?.kill();
        bridge = await startBridge(rig, {
          onLog,
          killAt: { stage: point.stage, key: `in:steer-${tag}` },
        });
      }
      await rig.sendAcked(userMessage(`task-${tag}`, `run the slow task ${i}`));
      // The turn runs: its first model call is streaming.
      await rig.waitFor((f) => f.type === 'text_delta', 30_000, since);
      const logsBefore = logs.length;
      const steer = userMessage(`steer-${tag}`, steerText);
      if ('stage' in point) {
        await rig.send(steer);
        await bridge?.exited;
      } else {
        await rig.sendAcked(steer);
        if (point.afterAckMs > 0) await pause(point.afterAckMs);
        await bridge?.kill();
      }
      bridge = await startBridge(rig, { onLog });

      // The CLI takes the steer at the turn's next model call and the turn ends.
      const taken = await rig.waitFor(
        (f) => f.type === 'message_taken' && f.inboundIds.includes(`steer-${tag}`),
        30_000,
        since,
      );
      const ended = await rig.waitFor((f) => f.type === 'turn_ended', 30_000, since);
      expect(ended).toMatchObject({ outcome: 'success' });
      const frames = rig.frames.slice(since);
      expect(frames.filter((f) => f.type === 'turn_started')).toHaveLength(1);
      expect(taken).toMatchObject({ turnId: (ended as { turnId: string }).turnId });
      expect(
        frames.filter((f) => f.type === 'message_taken' && f.inboundIds.includes(`steer-${tag}`)),
      ).toHaveLength(1);

      // The model: the steer surfaced as a steer, and no request carries it twice.
      const requests = rig.model.messageRequests().slice(requestsBefore);
      const asSteer = requests.filter(
        (r) => r.view?.userTextSource === 'steer' && r.view.userText.includes(steerText),
      );
      expect(asSteer.length).toBeGreaterThanOrEqual(1);
      expect(Math.max(...requests.map((r) => count(r.body, steerText)))).toBe(1);
      // Nothing else opened a turn with it.
      expect(
        requests.filter((r) => r.view?.userTextSource === 'user' && r.view.userText.includes(steerText)),
      ).toHaveLength(0);

      // Written again exactly when the crash came before the write.
      expect(rewrites(logsBefore)).toBe('stage' in point && point.stage === 'intent_saved' ? 1 : 0);
      outcome.push(
        `steer ${describePoint(point)}: settled ${settled(logsBefore)}, rewritten ${rewrites(logsBefore)}`,
      );
    }, 90_000);
  }

  for (const [i, point] of KILL_POINTS.entries()) {
    it(`a message to an idle CLI, bridge killed ${describePoint(point)}: one turn`, async () => {
      const tag = randomUUID().slice(0, 8);
      const question = `plain question ${i} ${tag}`;
      const since = rig.frames.length;
      const requestsBefore = rig.model.messageRequests().length;
      const logsBefore = await sendAndCrash(userMessage(`plain-${tag}`, question), point);
      const ended = await rig.waitFor((f) => f.type === 'turn_ended', 30_000, since);
      expect(ended).toMatchObject({ outcome: 'success' });
      const frames = rig.frames.slice(since);
      expect(frames.filter((f) => f.type === 'turn_started')).toHaveLength(1);
      expect(
        frames
          .filter((f) => f.type === 'text')
          .map((f) => (f as { text: string }).text)
          .join(''),
      ).toBe('A plain answer, streamed.');
      // A short pause: a second copy would open a second turn right after the first.
      await pause(1500);
      const opening = rig.model
        .messageRequests()
        .slice(requestsBefore)
        .filter((r) => r.view?.kind === 'main' && r.view.userText.includes(question));
      expect(opening).toHaveLength(1);
      expect(rig.frames.slice(since).filter((f) => f.type === 'turn_started')).toHaveLength(1);
      expect(rewrites(logsBefore)).toBe('stage' in point && point.stage === 'intent_saved' ? 1 : 0);
      outcome.push(
        `message ${describePoint(point)}: settled ${settled(logsBefore)}, rewritten ${rewrites(logsBefore)}`,
      );
    }, 90_000);
  }

  it('the gateway side got every reliable frame once, from one CLI', () => {
    expect(duplicates(rig.frames)).toEqual([]);
    expect(rig.of('operator_event').filter((f) => f.kind === 'cli_exited')).toHaveLength(0);
  });
});
