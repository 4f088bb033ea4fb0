/**
 * The bridge in-process, driving the real claude CLI against the scripted Messages API.
 * One process covers several turns to keep the real-CLI cost down.
 */

import { bash, rule, say } from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bridge, createBridge } from '../../packages/agent-bridge/src/index.js';
import { bridgeOptions, createRig, type Rig, userMessage } from './harness.js';

describe('bridge with the real CLI', () => {
  let rig: Rig;
  let bridge: Bridge;

  beforeAll(async () => {
    rig = await createRig([
      rule(
        'hello',
        say('Hi there, this answer is streamed in small pieces.', { chunkSize: 5, chunkDelayMs: 15 }),
      ),
      rule('write a file', bash('echo hi > out.txt', 'Write a file'), say('Done.')),
      rule('remove it', bash('rm -f out.txt', 'Remove a file'), say('Could not.')),
    ]);
    bridge = createBridge(bridgeOptions(rig));
    await bridge.start();
  });

  afterAll(async () => {
    await bridge?.stop('shutdown');
    await rig?.cleanup();
  });

  it('streams an answer: turn_started, message_taken, deltas, text, turn_ended', async () => {
    await rig.send(userMessage('in-1', 'hello'));
    const ended = await rig.waitFor((f) => f.type === 'turn_ended');
    const started = rig.of('turn_started')[0];
    expect(started?.inboundIds).toEqual(['in-1']);
    expect(rig.of('message_taken')[0]?.inboundIds).toEqual(['in-1']);
    expect(ended).toMatchObject({ type: 'turn_ended', turnId: started?.turnId, outcome: 'success' });
    const text = rig
      .of('text')
      .map((f) => f.text)
      .join('');
    expect(text).toBe('Hi there, this answer is streamed in small pieces.');
    const deltas = rig.of('text_delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.delta).join('')).toBe(text);
    expect(bridge.status().sessionId).toBeTruthy();
    // The header reached the model with the Telegram context.
    const request = rig.model.messageRequests()[0];
    expect(JSON.stringify(request?.body)).toContain('inbound=in-1');
  });

  it('asks permission for Bash; allow runs it, deny does not', async () => {
    const since = rig.frames.length;
    await rig.send(userMessage('in-2', 'write a file'));
    const prompt = (await rig.waitFor((f) => f.type === 'permission_request', 30_000, since)) as Extract<
      (typeof rig.frames)[number],
      { type: 'permission_request' }
    >;
    expect(prompt.toolName).toBe('Bash');
    expect(prompt.summary).toContain('echo hi > out.txt');
    expect(bridge.status().state).toBe('awaiting_input');
    await rig.send({ type: 'permission_answer', requestId: prompt.requestId, decision: 'allow' });
    await rig.waitFor((f) => f.type === 'turn_ended', 30_000, since);
    const finished = rig.frames.slice(since).find((f) => f.type === 'tool_finished');
    expect(finished).toMatchObject({ isError: false });
    expect(
      rig.frames.slice(since).some((f) => f.type === 'prompt_closed' && f.requestId === prompt.requestId),
    ).toBe(true);

    const since2 = rig.frames.length;
    await rig.send(userMessage('in-3', 'remove it'));
    const prompt2 = (await rig.waitFor((f) => f.type === 'permission_request', 30_000, since2)) as Extract<
      (typeof rig.frames)[number],
      { type: 'permission_request' }
    >;
    await rig.send({
      type: 'permission_answer',
      requestId: prompt2.requestId,
      decision: 'deny',
      message: 'no',
    });
    await rig.waitFor((f) => f.type === 'turn_ended', 30_000, since2);
    expect(rig.frames.slice(since2).find((f) => f.type === 'tool_finished')).toMatchObject({ isError: true });
  });
});
