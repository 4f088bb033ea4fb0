import { describe, expect, it } from 'vitest';
import type { FrameOf } from '../src/common/messages/frame.js';
import type { ChannelStore } from '../src/common/store.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { memoryLink, side, waitFor } from './harness.js';

const text = (i: number): FrameOf<'text'> => ({
  type: 'text',
  turnId: 't',
  blockId: `b${i}`,
  text: `chunk ${i}`,
});

/** A store whose peer-cursor writes fail (ENOSPC) while `full` is true. */
function fillingStore(): ChannelStore & { full: boolean; failedWrites: number } {
  const inner = createMemoryChannelStore();
  const store = {
    full: false,
    failedWrites: 0,
    get streamId() {
      return inner.streamId;
    },
    append: inner.append.bind(inner),
    acknowledge: inner.acknowledge.bind(inner),
    pendingAfter: inner.pendingAfter.bind(inner),
    readPeer: inner.readPeer.bind(inner),
    writePeer(cursor: Parameters<ChannelStore['writePeer']>[0]) {
      if (store.full) {
        store.failedWrites++;
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      inner.writePeer(cursor);
    },
  };
  return store;
}

describe('a peer cursor the store cannot write (a full disk)', () => {
  it('keeps the connection up, withholds the ack until the cursor is stored, and delivers each frame once', async () => {
    const gatewayStore = fillingStore();
    const gateway = side(gatewayStore);
    const bridge = side();
    const link = memoryLink(gateway, bridge);
    try {
      await waitFor(() => link.gateway.ready && link.bridge.ready, 2_000, 'handshake');
      gatewayStore.full = true;
      for (const i of [1, 2, 3]) await link.send('bridge', text(i));
      await waitFor(() => gateway.received.length === 3, 2_000, 'delivery');
      await waitFor(() => gatewayStore.failedWrites >= 2, 2_000, 'a retried cursor write');
      // Not acknowledged: the bridge still holds them, so a gateway crash now would lose nothing.
      expect(bridge.store.pendingAfter(0)).toHaveLength(3);
      expect(link.gateway.closed).toBe(false);

      gatewayStore.full = false;
      await waitFor(() => bridge.store.pendingAfter(0).length === 0, 5_000, 'the ack once the disk has room');
      expect(gatewayStore.readPeer()?.lastSeen).toBe(3);
      expect(gateway.received.map((f) => (f as FrameOf<'text'>).blockId)).toEqual(['b1', 'b2', 'b3']);
    } finally {
      link.close();
    }
  });
});
