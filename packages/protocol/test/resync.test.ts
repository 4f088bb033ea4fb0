/**
 * Either side may lose its state (an operator resets the agent, a state directory is restored from an
 * old backup): the next handshake resynchronises, and no reconnect ends in `sequence_gap`. In-memory
 * links, no sockets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AppFrame, FrameOf } from '../src/common/messages/frame.js';
import type { ChannelStore } from '../src/common/store.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { type LinkSide, memoryLink, side, waitFor } from './harness.js';

const text = (i: number): FrameOf<'text'> => ({
  type: 'text',
  turnId: 't',
  blockId: `b${i}`,
  text: `chunk ${i}`,
});
const numbered = (frames: AppFrame[]) =>
  frames.map((f) => [(f as FrameOf<'text'>).blockId, (f as { seq?: number }).seq]);

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

function connect(gateway: LinkSide, bridge: LinkSide) {
  const link = memoryLink(gateway, bridge);
  closers.push(link.close);
  return link;
}

/** The gateway sends frames 1–5 to the bridge, which handles and acknowledges them all. */
async function history(gateway: LinkSide, bridge: LinkSide) {
  const link = connect(gateway, bridge);
  for (let i = 1; i <= 5; i++) await link.send('gateway', text(i));
  await waitFor(() => gateway.store.pendingAfter(0).length === 0, 2_000, 'acks of 1–5');
  link.close();
  return link;
}

/** Same stores, nothing received yet: what a restarted process has. */
const restarted = (store: ChannelStore): LinkSide => side(store);

describe('resync after lost state', () => {
  it('a receiver that lost its state takes the next frame instead of waiting for seq 1 forever', async () => {
    const gateway = side();
    await history(gateway, side());
    const bridge = side(); // wiped: no cursor, a new stream of its own
    const link = connect(restarted(gateway.store), bridge);
    await waitFor(() => link.bridge.ready, 2_000, 'handshake');
    await link.send('gateway', text(6));
    await link.send('gateway', text(7));
    await waitFor(() => bridge.received.length === 2, 2_000, 'frames after the wipe');
    expect(numbered(bridge.received)).toEqual([
      ['b6', 6],
      ['b7', 7],
    ]);
    expect(link.bridge.ready && link.gateway.ready).toBe(true);
  });

  it('a receiver that lost its state gets every frame the sender still holds, then new ones', async () => {
    const gateway = side();
    await history(gateway, side());
    // Sent while the bridge was down: held, unacknowledged.
    const offline = memoryLink(gateway, side());
    offline.close();
    await offline.send('gateway', text(6));
    await offline.send('gateway', text(7));
    expect(gateway.store.pendingAfter(0).map((p) => p.seq)).toEqual([6, 7]);
    const bridge = side();
    const link = connect(restarted(gateway.store), bridge);
    await waitFor(() => bridge.received.length === 2, 2_000, 'held frames');
    await link.send('gateway', text(8));
    await waitFor(() => bridge.received.length === 3, 2_000, 'new frame');
    expect(numbered(bridge.received)).toEqual([
      ['b6', 6],
      ['b7', 7],
      ['b8', 8],
    ]);
  });

  it('a receiver restored from an older backup (same stream, cursor behind) continues from the sender', async () => {
    const gateway = side();
    const bridgeStore = createMemoryChannelStore();
    await history(gateway, side(bridgeStore));
    bridgeStore.writePeer({ streamId: gateway.store.streamId, lastSeen: 2 }); // the backup knew of 1–2
    const bridge = side(bridgeStore);
    const link = connect(restarted(gateway.store), bridge);
    await waitFor(() => link.bridge.ready, 2_000, 'handshake');
    await link.send('gateway', text(6));
    await waitFor(() => bridge.received.length === 1, 2_000, 'frame after the restore');
    expect(numbered(bridge.received)).toEqual([['b6', 6]]);
    expect(bridgeStore.readPeer()).toEqual({ streamId: gateway.store.streamId, lastSeen: 6 });
  });

  it('a sender that lost its state starts a new stream, and the receiver starts a new filter for it', async () => {
    const bridgeStore = createMemoryChannelStore();
    await history(side(), side(bridgeStore));
    const gateway = side(); // wiped: a new stream numbering from 1
    const bridge = side(bridgeStore);
    const link = connect(gateway, bridge);
    await link.send('gateway', text(6));
    await waitFor(() => bridge.received.length === 1, 2_000, 'frame of the new stream');
    expect(numbered(bridge.received)).toEqual([['b6', 1]]);
    expect(bridgeStore.readPeer()).toEqual({ streamId: gateway.store.streamId, lastSeen: 1 });
  });

  it('both sides lose their state at once, in both directions', async () => {
    await history(side(), side());
    const gateway = side();
    const bridge = side();
    const link = connect(gateway, bridge);
    await link.send('gateway', text(1));
    await link.send('bridge', text(2));
    await waitFor(() => bridge.received.length === 1 && gateway.received.length === 1, 2_000, 'both ways');
    expect(numbered(bridge.received)).toEqual([['b1', 1]]);
    expect(numbered(gateway.received)).toEqual([['b2', 1]]);
  });

  it('still refuses a gap that is not the first frame after the handshake', async () => {
    const gateway = side();
    const bridge = side();
    const link = connect(gateway, bridge);
    await link.send('gateway', text(1));
    await waitFor(() => bridge.received.length === 1, 2_000, 'first frame');
    // Only a broken sender skips a number mid-connection.
    await link.gateway.write({ ...text(3), seq: 3 });
    await waitFor(() => link.bridge.closed, 2_000, 'gap refused');
    expect(numbered(bridge.received)).toEqual([['b1', 1]]);
  });
});
