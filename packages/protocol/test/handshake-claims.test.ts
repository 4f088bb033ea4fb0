/**
 * A peer's handshake says how much of this side's stream it has seen; a claim of more than this side
 * ever sent must not make it forget frames the peer never got. In-memory links, no sockets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder } from '../src/common/codec.js';
import { type FrameOf, PROTOCOL_VERSION } from '../src/common/messages/frame.js';
import { Connection } from '../src/node/connection.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { memoryLink, memoryPair, side, waitFor } from './harness.js';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const text = (i: number): FrameOf<'text'> => ({
  type: 'text',
  turnId: 't',
  blockId: `b${i}`,
  text: `chunk ${i}`,
});

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** The gateway's side over `store`, with a raw peer on the other end that records what it is sent. */
function rawBridge(store: ReturnType<typeof createMemoryChannelStore>) {
  const [a, b] = memoryPair();
  const gateway = new Connection(a, {
    role: 'server',
    agent: 'demo',
    instanceId: 'gw',
    store,
    logger: silent,
    onFrame: () => {},
  });
  const decoder = new FrameDecoder(1 << 20);
  const received: Array<{ type: string; seq?: number }> = [];
  b.on('data', (chunk: Buffer) => {
    for (const event of decoder.push(chunk)) if (event.kind !== 'error') received.push(event.value as never);
  });
  closers.push(() => {
    gateway.close('test over');
    b.destroy();
  });
  return { gateway, received, write: (frame: object) => b.write(encodeFrame(frame as never)) };
}

describe('handshake claims', () => {
  it('a peer claiming a lastSeen beyond what was sent does not acknowledge frames it never got', async () => {
    const store = createMemoryChannelStore();
    // Numbered while no bridge was connected: never written to any socket.
    for (let i = 1; i <= 3; i++) store.append(text(i));
    const peer = rawBridge(store);
    peer.write({
      type: 'hello',
      version: PROTOCOL_VERSION,
      agent: 'demo',
      instanceId: 'liar',
      streamId: 'bridge-stream',
      peerStreamId: store.streamId,
      lastSeen: 1_000_000,
    });
    await waitFor(() => peer.gateway.ready, 2_000, 'handshake');
    await waitFor(() => peer.received.filter((f) => f.type === 'text').length === 3, 2_000, 'resend');
    expect(peer.received.filter((f) => f.type === 'text').map((f) => f.seq)).toEqual([1, 2, 3]);
    expect(store.pendingAfter(0).map((p) => p.seq)).toEqual([1, 2, 3]);
    // Nor does an ack for a number not yet sent: frame 4 is numbered, not written.
    store.append(text(4));
    peer.write({ type: 'ack', seq: 1_000_000 });
    await waitFor(() => store.pendingAfter(0).length < 4, 2_000, 'ack of what was sent');
    expect(store.pendingAfter(0).map((p) => p.seq)).toEqual([4]);
  });

  it('a truthful claim after a reconnect still spares the frames the peer has', async () => {
    const gateway = side();
    const bridge = side();
    const first = memoryLink(gateway, bridge);
    closers.push(first.close);
    await waitFor(() => first.bridge.ready, 2_000, 'handshake');
    for (let i = 1; i <= 3; i++) await first.send('gateway', text(i));
    await waitFor(() => bridge.received.length === 3, 2_000, 'frames');
    first.close();
    const second = memoryLink(gateway, bridge);
    closers.push(second.close);
    await waitFor(() => second.bridge.ready, 2_000, 'second handshake');
    await waitFor(() => gateway.store.pendingAfter(0).length === 0, 2_000, 'claim taken');
    expect(bridge.received.length).toBe(3);
  });
});
