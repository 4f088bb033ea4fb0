/**
 * The reliable channel's half that lives in the gateway's store (`ChannelStore` of
 * `@switchyard/protocol`): the `channel_out` outbox of frames for the bridge until it acknowledges
 * them, this side's stream id and next sequence number, and the cursor of the bridge's stream
 * (all three in `meta`).
 *
 * Invariant: appending a `user_message` frame and acknowledging it move its inbox row in the same
 * transaction ({@link InboxDelivery}).
 */
import { randomUUID } from 'node:crypto';
import type { AppFrame, ChannelStore, PeerCursor, PendingFrame } from '@switchyard/protocol';
import type { Db } from './database.js';
import type { InboxDelivery } from './inbox.js';
import type { Settings } from './settings.js';

/** The channel store over `db`; the first open of a file gives it its stream id. */
export function createChannelOutbox(
  db: Db,
  meta: Pick<Settings, 'getMeta' | 'setMeta'>,
  inbox: InboxDelivery,
): ChannelStore {
  let streamId = meta.getMeta('stream_id');
  if (streamId === undefined) {
    streamId = randomUUID();
    meta.setMeta('stream_id', streamId);
    meta.setMeta('next_seq', '1');
  }
  const q = {
    appendOut: db.prepare('INSERT INTO channel_out (seq, frame) VALUES (?, ?)'),
    ackOut: db.prepare('DELETE FROM channel_out WHERE seq <= ?'),
    pendingOut: db.prepare<[number], { seq: number; frame: string }>(
      'SELECT seq, frame FROM channel_out WHERE seq > ? ORDER BY seq',
    ),
  };
  const nextSeq = (): number => Number(meta.getMeta('next_seq') ?? '1');

  return {
    streamId,
    append: db.transaction((frame: AppFrame): number => {
      const seq = nextSeq();
      q.appendOut.run(seq, JSON.stringify(frame));
      meta.setMeta('next_seq', String(seq + 1));
      if (frame.type === 'user_message') inbox.sent(frame.inboundId, seq);
      return seq;
    }),
    acknowledge: db.transaction((upTo: number): void => {
      q.ackOut.run(upTo);
      inbox.acknowledged(upTo);
    }),
    pendingAfter(after: number): PendingFrame[] {
      return q.pendingOut
        .all(after)
        .map((row) => ({ seq: row.seq, frame: JSON.parse(row.frame) as AppFrame }));
    },
    readPeer(): PeerCursor | undefined {
      const peer = meta.getMeta('peer_stream_id');
      if (peer === undefined) return undefined;
      return { streamId: peer, lastSeen: Number(meta.getMeta('peer_last_seen') ?? '0') };
    },
    writePeer: db.transaction((cursor: PeerCursor): void => {
      meta.setMeta('peer_stream_id', cursor.streamId);
      meta.setMeta('peer_last_seen', String(cursor.lastSeen));
    }),
  };
}
