/**
 * No input stops a channel: a numbered frame the receiver cannot take (invalid, or its handler keeps
 * throwing) is refused by seq, reported on both sides, and skipped; the sender refuses at `send` what the
 * receiver would refuse. In-memory links, no sockets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder } from '../src/common/codec.js';
import { ProtocolError } from '../src/common/errors.js';
import { silentLogger } from '../src/common/logger.js';
import { type AppFrame, type FrameOf, PROTOCOL_VERSION } from '../src/common/messages/frame.js';
import type { Refusal } from '../src/common/refusal.js';
import { Connection } from '../src/node/connection.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { memoryLink, memoryPair, side, waitFor } from './harness.js';

const text = (i: number): FrameOf<'text'> => ({
  type: 'text',
  turnId: 't',
  blockId: `b${i}`,
  text: `chunk ${i}`,
});
const blocks = (frames: AppFrame[]) => frames.map((f) => (f as FrameOf<'text'>).blockId);

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

describe('a frame the receiver cannot take', () => {
  const invalidFrames: Array<{ name: string; frame: Record<string, unknown>; detail: RegExp; type: string }> =
    [
      {
        name: 'fails the schema',
        frame: {
          type: 'question_answer',
          seq: 1,
          requestId: 'r',
          answers: { 'Which one?': 'x'.repeat(20_000) },
        },
        detail: /answers\.\[key\]: Too big.*run the same Switchyard release/,
        type: 'question_answer',
      },
      {
        name: 'carries a msgpack extension type',
        frame: {
          type: 'tool_started',
          seq: 1,
          turnId: 't',
          toolUseId: 'u',
          name: 'Which one?',
          input: { at: new Date(0) },
        },
        detail: /contains a Date.*send only maps/,
        type: 'tool_started',
      },
    ];
  for (const { name, frame: bad, detail, type } of invalidFrames) {
    it(`is refused by seq when it ${name}, and the frames after it are delivered`, async () => {
      // A sender built with other limits: the frame passes its checks and fails ours.
      const [ours, theirs] = memoryPair();
      const refusals: Refusal[] = [];
      const received: AppFrame[] = [];
      const store = createMemoryChannelStore();
      const connection = new Connection(ours, {
        role: 'server',
        agent: 'demo',
        instanceId: 'gw',
        store,
        logger: silentLogger,
        onFrame: (frame) => void received.push(frame),
        onRefused: (refusal) => void refusals.push(refusal),
      });
      closers.push(() => connection.close('test over'));
      const decoder = new FrameDecoder();
      const fromGateway: Array<{ type: string; seq?: number; code?: string; message?: string }> = [];
      theirs.on('data', (chunk: Buffer) => {
        for (const event of decoder.push(chunk))
          if (event.kind === 'value') fromGateway.push(event.value as never);
      });
      const write = (value: unknown) => theirs.write(encodeFrame(value));
      write({
        type: 'hello',
        version: PROTOCOL_VERSION,
        agent: 'demo',
        instanceId: 'b',
        streamId: 's',
        lastSeen: 0,
      });
      write(bad);
      write({ ...text(2), seq: 2 });
      await waitFor(() => fromGateway.some((f) => f.type === 'ack' && f.seq === 2), 2_000, 'ack of seq 2');
      const refused = fromGateway.find((f) => f.type === 'refused');
      expect(refused).toMatchObject({ seq: 1, code: 'invalid' });
      expect(refused?.message).toMatch(detail);
      expect(refused?.message).not.toMatch(/Which one/); // user text is never echoed
      expect(blocks(received)).toEqual(['b2']);
      expect(refusals).toEqual([
        expect.objectContaining({
          direction: 'received',
          seq: 1,
          frameType: type,
          code: 'invalid',
        }),
      ]);
      expect(store.readPeer()).toEqual({ streamId: 's', lastSeen: 2 });
      expect(connection.ready).toBe(true);
      expect(fromGateway.some((f) => f.type === 'error')).toBe(false);
    });
  }

  it('is retried, then refused, when its handler keeps throwing; the sender drops it and is told', async () => {
    const attempts = new Map<string, number>();
    const bridge = side();
    bridge.onFrame = (frame) => {
      const block = (frame as FrameOf<'text'>).blockId;
      attempts.set(block, (attempts.get(block) ?? 0) + 1);
      if (block === 'b2') throw new Error('cannot render this one');
      bridge.received.push(frame);
    };
    const gateway = side();
    const link = memoryLink(gateway, bridge);
    closers.push(link.close);
    for (let i = 1; i <= 3; i++) await link.send('gateway', text(i));
    await waitFor(() => bridge.received.length === 2, 2_000, 'frames around the refused one');
    await waitFor(() => gateway.refusals.length === 1, 2_000, 'refusal reaches the sender');
    expect(blocks(bridge.received)).toEqual(['b1', 'b3']);
    expect(attempts.get('b2')).toBe(3); // the first try and two retries
    expect(gateway.refusals[0]).toMatchObject({
      direction: 'sent',
      seq: 2,
      frameType: 'text',
      code: 'handler_failed',
      frame: text(2),
    });
    expect(gateway.refusals[0]?.message).toMatch(
      /bridge could not handle text \(seq 2\) after 3 attempts.*see the bridge's log/,
    );
    expect(bridge.refusals).toEqual([
      expect.objectContaining({ direction: 'received', seq: 2, frame: { ...text(2), seq: 2 } }),
    ]);
    await waitFor(() => gateway.store.pendingAfter(0).length === 0, 2_000, 'outbox emptied');
    expect(link.gateway.ready && link.bridge.ready).toBe(true);
  });

  it('does not stop a channel whose handler always throws: every frame is refused, in order, once', async () => {
    const bridge = side();
    bridge.onFrame = () => {
      throw new Error('broken handler');
    };
    const gateway = side();
    const link = memoryLink(gateway, bridge);
    closers.push(link.close);
    for (let i = 1; i <= 20; i++) await link.send('gateway', text(i));
    await waitFor(() => gateway.refusals.length === 20, 5_000, 'twenty refusals');
    expect(gateway.refusals.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(bridge.refusals).toHaveLength(20);
    expect(gateway.store.pendingAfter(0)).toEqual([]);
    expect(link.bridge.ready).toBe(true);
  });

  it('keeps the channel when the application throws from onRefused', async () => {
    const bridge = side();
    bridge.onFrame = (frame) => {
      if ((frame as FrameOf<'text'>).blockId === 'b1') throw new Error('no');
      bridge.received.push(frame);
    };
    const gateway = side();
    const link = memoryLink(gateway, bridge, {
      onRefused: () => {
        throw new Error('the application broke too');
      },
    });
    closers.push(link.close);
    await link.send('gateway', text(1));
    await link.send('gateway', text(2));
    await waitFor(() => bridge.received.length === 1, 2_000, 'frame after the refused one');
    expect(link.gateway.ready && link.bridge.ready).toBe(true);
  });
});

describe('send', () => {
  const endpointSend = (frame: AppFrame) => {
    const store = createMemoryChannelStore();
    const link = memoryLink(side(store), side());
    closers.push(link.close);
    return { store, send: () => link.send('gateway', frame) };
  };

  it('rejects an invalid frame with a ProtocolError naming the field, without throwing, and stores nothing', async () => {
    const { store, send } = endpointSend({
      type: 'set_model',
      commandId: 'c',
      route: { chatId: 42 },
      model: '',
    });
    let result: Promise<void> | undefined;
    expect(() => {
      result = send();
    }).not.toThrow();
    await expect(result).rejects.toThrow(ProtocolError);
    await expect(send()).rejects.toThrow(/model: Too small.*It was not queued/);
    expect(store.pendingAfter(0)).toEqual([]);
  });

  it('refuses a frame carrying a value msgpack would send as an extension type', async () => {
    const frame = {
      type: 'tool_started',
      turnId: 't',
      toolUseId: 'u',
      name: 'Bash',
      input: { at: new Date(0) },
    };
    const { store, send } = endpointSend(frame as AppFrame);
    await expect(send()).rejects.toThrow(/contains a Date/);
    expect(store.pendingAfter(0)).toEqual([]);
  });

  it('refuses a frame over the frame size limit', async () => {
    const huge = {
      type: 'tool_started',
      turnId: 't',
      toolUseId: 'u',
      name: 'Bash',
      input: { a: 'x'.repeat(17_000_000) },
    };
    const { send } = endpointSend(huge as AppFrame);
    await expect(send()).rejects.toThrow(/over the 16777216-byte frame limit/);
  });

  it('refuses control frames', async () => {
    const { send } = endpointSend({ type: 'ack', seq: 1 } as unknown as AppFrame);
    await expect(send()).rejects.toThrow(/control frame/);
  });

  it('carries the longest answers a user can give: a 4,000-char question, 4,096 typed chars, 20 labels of 500', async () => {
    const bridge = side();
    const link = memoryLink(side(), bridge);
    closers.push(link.close);
    const question = 'q'.repeat(4000);
    const labels = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(500, 'l')).join(', ');
    await link.send('gateway', {
      type: 'question_answer',
      requestId: 'r1',
      answers: { [question]: 't'.repeat(4096) },
    });
    await link.send('gateway', { type: 'question_answer', requestId: 'r2', answers: { [question]: labels } });
    await waitFor(() => bridge.received.length === 2, 2_000, 'both answers');
    expect(bridge.refusals).toEqual([]);
    expect((bridge.received[1] as FrameOf<'question_answer'>).answers[question]).toBe(labels);
  });
});
