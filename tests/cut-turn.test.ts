/**
 * A turn cut for good: the bridge stopped and the agent's `claude` ended with it (what `systemctl stop`
 * does: SIGTERM, then `stop-claude`) while an answer streams into a private chat, whose replies are a draft
 * and one rich message. The cut turn must end in the chat, and the next message must be answered there: the
 * answers-in-order rule held every later answer behind the cut one, which never came.
 */
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

const LONG_ANSWER = Array.from(
  { length: 40 },
  (_, i) => `Line ${i + 1} of a long answer, streamed slowly.`,
).join('\n');

describe('end to end: a turn cut with its Claude process', () => {
  const startSystem = systemPerTest();

  it('a private chat answers the next message after the bridge and its claude were stopped mid-stream', async () => {
    const system = await startSystem({
      rules: [
        rule('long', say(LONG_ANSWER, { chunkSize: 12, chunkDelayMs: 60 })),
        rule('after', say('Answered after the cut.')),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'long please');
    await telegram.waitFor(
      () =>
        [
          ...botMessages(telegram, chatId).map((m) => m.text),
          telegram.chat(chatId).drafts.at(-1)?.text ?? '',
        ].some((t) => t.includes('Line 3')),
      { timeoutMs: 60_000 },
    );
    await system.kill('bridge', 'SIGTERM');
    const stopped = await system.stopClaude();
    expect(stopped.status, stopped.stderr).toBe(0);
    telegram.sendText(chatId, 'after the cut');
    await new Promise((resolve) => setTimeout(resolve, 500));
    system.start('bridge');
    const second = await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text.includes('Answered after the cut.')),
      { timeoutMs: 60_000 },
    );
    expect(second).toBeDefined();
    // The gateway stops promptly once both turns are over.
    const stoppedAt = Date.now();
    await system.kill('gateway', 'SIGTERM');
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
  });
});
