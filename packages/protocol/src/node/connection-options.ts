/**
 * What a connection is built from: its options (who this side is, where its state is kept, whom to tell
 * what) and the defaults of its limits and timers.
 */
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { AppFrame, FrameOf, ProtocolErrorCode } from '../common/messages/frame.js';
import type { Refusal } from '../common/refusal.js';
import type { ChannelStore, Receipt } from '../common/store.js';

/** What one connection needs: who this side is, where its state is kept, and whom to tell what. */
export interface ConnectionOptions {
  role: 'server' | 'client';
  agent: string;
  instanceId: string;
  /** This side's Switchyard release and host name, sent in the handshake (see `hello`). */
  release?: string;
  host?: string;
  store: ChannelStore;
  logger: Logger;
  /** `receipt` is given with each numbered frame (see {@link Receipt}). */
  onFrame(frame: AppFrame, receipt?: Receipt): void | Promise<void>;
  maxFrameBytes?: number;
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  /** A peer that has not completed its handshake this long after connecting is dropped; default 5 s. */
  handshakeTimeoutMs?: number;
  /**
   * How long to wait before each retry of a handler that threw; default `[100, 1000]` (three attempts
   * in all). A handler still failing after the last is refused (see {@link Refusal}).
   */
  handlerRetryDelaysMs?: readonly number[];
  /** Told of every refused frame, in either direction. Must not throw (what it throws is logged). */
  onRefused?(refusal: Refusal): void;
  /**
   * Decides, once the peer's handshake has been checked and before anything is stored or sent, whether
   * it may connect; a returned refusal is written as an `error` frame and the connection is closed.
   */
  admit?(
    peer: FrameOf<'hello'> | FrameOf<'welcome'>,
  ): { code: ProtocolErrorCode; message: string } | undefined;
  /** Called once, when the handshake completes. */
  onReady?(peer: FrameOf<'hello'> | FrameOf<'welcome'>): void;
  /** Called once, when the connection is gone for any reason. */
  onClose?(reason: string): void;
  /** Told of each ping's round trip: ms from the ping written to its pong read. Must not throw. */
  onRoundTrip?(ms: number): void;
  /**
   * Told when this side refuses the peer before its handshake completed (another version, another agent,
   * a bridge already connected, no hello in time), with the words the peer is sent. Must not throw.
   */
  onHandshakeRefused?(refusal: { code: ProtocolErrorCode; message: string }): void;
  /** Time for pings, the handshake deadline and handler retries; default {@link systemClock}. */
  clock?: Clock;
}

/** Largest frame a peer may send before its handshake is done. */
export const HANDSHAKE_MAX_FRAME_BYTES = 64 * 1024;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 5_000;
export const DEFAULT_PING_INTERVAL_MS = 5_000;
export const DEFAULT_PING_TIMEOUT_MS = 15_000;
/** Pause reading once this many received frames wait for the handler. */
export const INBOUND_HIGH_WATER = 256;
/** Retrying a cursor the store could not write: 250 ms doubling to 30 s. */
export const CURSOR_RETRY_FIRST_MS = 250;
export const CURSOR_RETRY_MAX_MS = 30_000;
