/**
 * The soak as a test: `SOAK_MINUTES` (default 1.5, what the suite runs) of random faults under load, judged
 * by the invariant checker; prints one line (messages sent, answered once, lost, duplicated, stray
 * placeholders, faults injected). `SOAK_MESSAGES` (default 150) and `SOAK_SEED` (default 14) vary it.
 *
 * Why a minute and a half in the default run: a fault comes every 3–9 s, so 90 s deal 12–16 of them, and
 * the deck (`soak.ts`) deals all twelve kinds in each twelve draws — and goes on past the time until every
 * kind has come once: every kind, both services killed by both signals, at least once. The 150 messages
 * come about 1.9 a second, 30 a conversation, with four Claude processes for five conversations, so
 * processes are stopped for a slot and resumed all the time; a slow leak (a queue, a placeholder, a pin, a
 * process per message) has piled up by the time the run is judged, and one too slow for that is what the
 * 30-minute run is for. It was two minutes (200 messages) until the suite outgrew ten minutes on two
 * cores: the soak's process churn is CPU the rest of the suite waits for, so its length is run time.
 */
import { expect, it } from 'vitest';
import { describeViolations } from '../faults/invariants.js';
import { runSoak, SOAK_FAULTS } from './soak.js';

const minutes = Number(process.env.SOAK_MINUTES ?? 1.5);
const durationMs = Math.round(minutes * 60_000);

it(
  `soak: ${minutes} min of random faults under load, nothing lost, nothing doubled`,
  async () => {
    const result = await runSoak({
      durationMs,
      messages: Number(process.env.SOAK_MESSAGES ?? 150),
      seed: Number(process.env.SOAK_SEED ?? 14),
    });
    console.log(result.line);
    console.log(`soak faults by kind: ${JSON.stringify(result.byKind)}`);
    if (result.evidence)
      console.log(`soak: the chats, Bot API calls, faults and logs are in ${result.evidence}`);
    expect(describeViolations(result.violations)).toBe('');
    expect(result.tally.answeredOnce).toBe(result.tally.sent);
    // The deck deals every kind once in each twelve draws; a soak that missed one proved less than it says.
    expect(SOAK_FAULTS.filter((kind) => !result.byKind[kind])).toEqual([]);
  },
  durationMs + 400_000,
);
