/** What the pin tests share: shortened card timings, the pin log lines, a turn running one tool. */
import { type FakeBridge, sleep, startTurn, type World } from './harness.js';

/** Card timings shortened (show delay 300 ms) so long turns fit in a test. */
export const CARD = { showDelayMs: 300, coalesceMs: 50, minEditIntervalMs: 200, heartbeatMs: 500 };

/** The pin and unpin log lines. */
export const pinEvents = (w: World) =>
  w.logger.lines.filter(
    (l) => l.msg === 'pin-event' && (l.fields.event === 'pin' || l.fields.event === 'unpin'),
  );

/**
 * A turn that runs one Bash tool for `runMs` (or until `runMs` resolves, for a turn that must outlive
 * something the test waits for), then answers "done".
 */
export async function turn(
  b: FakeBridge,
  chatId: number,
  turnId: string,
  runMs: number | (() => Promise<unknown>),
  threadId?: number,
): Promise<void> {
  const route = threadId === undefined ? { chatId } : { chatId, threadId };
  await startTurn(b, { turnId, route, request: 'do work' });
  await b.send({
    type: 'tool_started',
    turnId,
    toolUseId: `${turnId}-u1`,
    name: 'Bash',
    input: { command: 'ls' },
  });
  await (typeof runMs === 'number' ? sleep(runMs) : runMs());
  await b.send({ type: 'tool_finished', turnId, toolUseId: `${turnId}-u1`, isError: false });
  await b.send({ type: 'text', turnId, blockId: `${turnId}-b`, text: 'done' });
  await b.send({ type: 'turn_ended', turnId, outcome: 'success' });
}
