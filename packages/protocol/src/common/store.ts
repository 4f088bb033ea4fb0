/**
 * What the reliable channel needs persisted, behind an interface so each side keeps it where it keeps
 * everything else: the gateway in SQLite, the bridge in its state directory, tests in memory.
 */
import type { AppFrame } from './messages/frame.js';

/** A frame kept until the peer acknowledges it, with the number it was sent under. */
export interface PendingFrame {
  seq: number;
  frame: AppFrame;
}

/** The peer's stream and the last sequence number handled from it. */
export interface PeerCursor {
  streamId: string;
  lastSeen: number;
}

/**
 * What produced a frame, as its sender records it with the frame (the bridge: the conversation and the
 * stdout position `[generation, line end, index]` or command key `<key>#<index>`). Opaque to the channel:
 * it is handed to the store with the frame, in the same call, and never sent.
 */
export interface FrameOrigin {
  readonly conversation: string;
  readonly source: readonly number[] | string;
}

/**
 * Durable state of one side of the channel.
 *
 * Contract: `append` is durable when it returns (the frame survives a crash of this process) and numbers
 * frames 1, 2, 3 … without gaps for the lifetime of `streamId`, keeping the frame's `origin` with it if the
 * store records origins; `acknowledge(n)` may forget every frame
 * with `seq <= n`; `writePeer` is durable when it returns. A store that loses its data must also change
 * its `streamId`, so that the peer resets its duplicate filter instead of dropping new frames.
 */
export interface ChannelStore {
  readonly streamId: string;
  append(frame: AppFrame, origin?: FrameOrigin): number;
  acknowledge(upTo: number): void;
  /** Unacknowledged frames with `seq > after`, in order. */
  pendingAfter(after: number): PendingFrame[];
  readPeer(): PeerCursor | undefined;
  /** Durable on return; a cursor the store already holds durably may return at once, writing nothing. */
  writePeer(cursor: PeerCursor): void;
  /**
   * For a store that commits in groups (the bridge's): runs `write` — the socket write of a frame just
   * appended — once that frame is durable: at once outside a group, after the group's one write inside
   * one, with the error instead if the group failed (its frames are then not stored). The endpoint
   * never writes a frame to the socket before it is durable. Absent: every append is durable on return.
   */
  whenDurable?(write: (failed?: unknown) => void): void;
}

/**
 * What the channel tells a handler about a numbered frame: the cursor that marks it handled. A handler
 * may make it durable in the same write as its own effects (`writePeer` inside its store's group); the
 * channel's own `writePeer` after the handler then finds it stored and costs nothing.
 */
export interface Receipt {
  readonly cursor: PeerCursor;
}
