import path from 'node:path';
import { recordedProcesses } from '@switchyard/agent-bridge';
import { rule, say } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

describe('end to end: the claude process crashes', () => {
  const startSystem = systemPerTest();

  it('reports the failed turn and resumes the conversation in a new process', async () => {
    const long = Array.from({ length: 100 }, (_, i) => `part${i}`).join(' ');
    const system = await startSystem({
      rules: [
        rule('tell me a story', say(long, { chunkSize: 5, chunkDelayMs: 50 })),
        rule('still there', say('Yes, still here.')),
      ],
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(chatId, 'tell me a story');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text.includes('part3')), {
      timeoutMs: 60_000,
    });
    const first = recordedProcesses(path.join(system.dir, 'state', 'bridge'))[0]?.record.pid as number;
    process.kill(first, 'SIGKILL');

    // Said in plain words, in the chat.
    await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).find(
          (m) => /exited|crashed|stopped|restart/i.test(m.text) && !m.text.includes('part'),
        ),
      { timeoutMs: 30_000 },
    );
    telegram.sendText(chatId, 'still there?');
    await telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === 'Yes, still here.'), {
      timeoutMs: 60_000,
    });
    const second = recordedProcesses(path.join(system.dir, 'state', 'bridge'))[0]?.record.pid;
    expect(second).not.toBe(first);
    // The new process resumed the session: the model sees the earlier turn in its request.
    const last = JSON.stringify(system.model.messageRequests().at(-1)?.body ?? {});
    expect(last).toContain('tell me a story');
  });
});
