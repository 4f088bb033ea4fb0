/**
 * `/status` history with the real CLI: the bridge tails the CLI's transcript and answers a
 * `status_request` with the recent exchanges — in order, the same after a bridge restart (the tail's
 * cursors and the history are restored from the snapshot: nothing lost, nothing twice), and across
 * `/clear` into the new session file.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FrameOf } from '@switchyard/protocol';
import { rule, say } from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bridge, type BridgeOptions, createBridge } from '../../packages/agent-bridge/src/index.js';
import { bridgeOptions, createRig, type Rig, userMessage } from './harness.js';

describe('status history from the transcript, real CLI', () => {
  let rig: Rig;
  let bridge: Bridge | undefined;
  let options: BridgeOptions;
  let asked = 0;

  /**
   * Sends a status_request and returns its answer's history as `role: text` strings. The request is not
   * a reliable frame (the gateway has its own fallback when no answer comes), so it is sent again if a
   * connection in the middle of a restart lost it.
   */
  const history = async (): Promise<string[]> => {
    for (let attempt = 1; ; attempt++) {
      const commandId = `st-${++asked}`;
      const since = rig.frames.length;
      await rig.send({ type: 'status_request', commandId, route: { chatId: 42 } });
      try {
        const status = (await rig.waitFor(
          (f) => f.type === 'status' && f.commandId === commandId,
          2000,
          since,
        )) as FrameOf<'status'>;
        return (status.history ?? []).map((e) => `${e.role}: ${e.text}`);
      } catch (err) {
        if (attempt === 5) throw err;
      }
    }
  };
  /** Polls until the history has `n` entries (the CLI flushes its transcript in batches). */
  const historyOf = async (n: number): Promise<string[]> => {
    const end = Date.now() + 10_000;
    for (;;) {
      const got = await history();
      if (got.length >= n || Date.now() > end) return got;
      await sleep(200);
    }
  };
  const turn = async (inboundId: string, text: string): Promise<void> => {
    const since = rig.frames.length;
    await rig.send(userMessage(inboundId, text));
    await rig.waitFor((f) => f.type === 'turn_ended', 30_000, since);
  };

  beforeAll(async () => {
    rig = await createRig([
      rule('first question', say('First answer.')),
      rule('second question', say(`Second answer. ${'long '.repeat(100)}`)),
      rule('third question', say('Third answer.')),
      rule('after clear', say('Fresh start.')),
    ]);
    options = bridgeOptions(rig, { stopGraceMs: 2000 });
    bridge = createBridge(options);
    await bridge.start();
  });

  afterAll(async () => {
    await bridge?.stop('shutdown');
    await rig?.cleanup();
  });

  it('answers status_request with the two turns, in order, header stripped, long text cut', async () => {
    await turn('h-1', 'first question');
    await turn('h-2', 'second question');
    const got = await historyOf(4);
    expect(got.slice(0, 3)).toEqual([
      'user: first question',
      'assistant: First answer.',
      'user: second question',
    ]);
    expect(got[3]).toMatch(/^assistant: Second answer\. long long .*…$/);
    expect(got).toHaveLength(4);
    expect(got.join('\n')).not.toContain('inbound=');
  });

  it('after a bridge restart: the same history, and the next turn is added once', async () => {
    const before = await history();
    const pid = rig.recordedPid();
    await bridge?.stop('restart');
    bridge = createBridge(options);
    await bridge.start();
    expect(rig.recordedPid()).toBe(pid); // adopted, not restarted
    expect(await history()).toEqual(before);
    await turn('h-3', 'third question');
    expect(await historyOf(6)).toEqual([...before, 'user: third question', 'assistant: Third answer.']);
  });

  it('follows the new session file after /clear', async () => {
    const before = await history();
    const since = rig.frames.length;
    await rig.send({ type: 'clear', commandId: 'c-1', route: { chatId: 42 } });
    await rig.waitFor((f) => f.type === 'command_result' && f.commandId === 'c-1', 30_000, since);
    await turn('h-4', 'after clear');
    expect(await historyOf(before.length + 3)).toEqual([
      ...before,
      'user: /clear',
      'user: after clear',
      'assistant: Fresh start.',
    ]);
  });
});
