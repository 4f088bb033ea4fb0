/**
 * What the fault matrices share: the tally of faults injected, the final judgement of a world, and the
 * steps a case is made of (a visibly streaming answer, an open permission prompt).
 */
import { afterAll, expect } from 'vitest';
import type { Conversation, FaultWorld } from './harness.js';
import { describeViolations } from './invariants.js';

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts faults by kind; the file's total and kinds are printed after its tests, under `label`. */
export function faultCounter(label: string): (name: string, n?: number) => void {
  const faults: Record<string, number> = {};
  afterAll(() => {
    const total = Object.values(faults).reduce((a, b) => a + b, 0);
    console.log(`${label}: ${total} faults injected: ${JSON.stringify(faults)}`);
  });
  return (name, n = 1) => {
    faults[name] = (faults[name] ?? 0) + n;
  };
}

/** Waits until the world has settled, then runs its checks, dumping the evidence when one fails. */
export async function judge(world: FaultWorld, label: string): Promise<void> {
  await world.settled();
  const { violations, tally } = world.verdict();
  const interrupted = world.conversations.reduce((n, c) => n + c.interrupted.length, 0);
  console.log(`${label} tally: ${JSON.stringify(tally)}, turns cut by their fault: ${interrupted}`);
  if (violations.length > 0) console.log(`${label}: evidence in ${world.dump(label)}`);
  expect(describeViolations(violations)).toBe('');
}

/** A long answer in `c`, waited for until it visibly streams (in a message, or a private chat's draft). */
export async function streaming(world: FaultWorld, c: Conversation, lines?: number): Promise<string> {
  const token = world.nextToken(c);
  world.script(token, lines === undefined ? 'long' : { before: [], lines });
  c.ask();
  await world.shows(c, 'Line 2 of the answer');
  return token;
}

/** Opens a permission prompt in `c` (Bash, to be allowed); resolves with its token and its message. */
export async function promptOpen(
  world: FaultWorld,
  c: Conversation,
): Promise<{ token: string; messageId: number }> {
  const token = world.nextToken(c);
  world.script(token, { prompt: 'permission' });
  c.ask();
  const prompt = await world.prompt(c, token);
  return { token, messageId: prompt.messageId };
}
