/** The {@link ChannelStore} kept in memory: for tests, and for peers that need no durability. */
import { randomUUID } from 'node:crypto';
import type { ChannelStore, PeerCursor, PendingFrame } from '../common/store.js';

/** A store that lives as long as the process; for tests and for peers that need no durability. */
export function createMemoryChannelStore(streamId: string = randomUUID()): ChannelStore {
  let nextSeq = 1;
  let pending: PendingFrame[] = [];
  let peer: PeerCursor | undefined;
  return {
    streamId,
    append(frame) {
      const seq = nextSeq++;
      pending.push({ seq, frame });
      return seq;
    },
    acknowledge(upTo) {
      if (pending.length > 0 && (pending[0] as PendingFrame).seq <= upTo) {
        pending = pending.filter((entry) => entry.seq > upTo);
      }
    },
    pendingAfter(after) {
      return pending.filter((entry) => entry.seq > after);
    },
    readPeer() {
      return peer;
    },
    writePeer(cursor) {
      peer = { ...cursor };
    },
  };
}
