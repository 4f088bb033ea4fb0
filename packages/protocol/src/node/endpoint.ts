/**
 * What the server and the client share: the application-facing `Endpoint` handle, which numbers
 * reliable frames into the store and writes them on whichever connection is current.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../common/clock.js';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, plainDataProblem, withSeq } from '../common/codec.js';
import { ProtocolError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import {
  type AppFrame,
  type FrameOf,
  type FrameType,
  type ProtocolErrorCode,
  parseFrame,
  RELIABLE_TYPES,
} from '../common/messages/frame.js';
import type { Refusal } from '../common/refusal.js';
import type { ChannelStore, FrameOrigin, Receipt } from '../common/store.js';
import type { Connection } from './connection.js';
import type { ConnectionOptions } from './connection-options.js';

/** Both ends of the socket expose the same handle. */
export interface Endpoint {
  /** Server: resolves once listening. Client: starts connecting (does not wait for the peer). */
  start(): Promise<void>;
  /** Closes sockets and timers; resolves when they are gone. Unacknowledged frames stay in the store. */
  stop(): Promise<void>;
  /**
   * Every frame is first checked as its receiver will check it (schema, plain data, size); for one that
   * fails, the returned promise rejects with a {@link ProtocolError} naming the field, and the frame is
   * neither stored nor sent. `send` itself never throws, so a caller's loop is not stopped by a frame.
   * Reliable frame types are then numbered and appended to the store synchronously, inside this call (so
   * a caller may make the append part of its own transaction), then written now if connected or resent
   * after the next handshake. Other frames are written only when connected, and dropped otherwise.
   * Resolves when the socket can take more: await it, that is the backpressure. `origin` goes to the
   * store with a reliable frame (see {@link FrameOrigin}); it is not sent.
   */
  send(frame: AppFrame, origin?: FrameOrigin): Promise<void>;
  /** True while a connection has completed its handshake and is open. */
  readonly connected: boolean;
}

/** Options both ends take. */
export interface EndpointOptions {
  /** Path of the Unix socket (at most 107 bytes). */
  socketPath: string;
  /** Both sides must name the same agent; a mismatch is refused at the handshake. */
  agent: string;
  store: ChannelStore;
  /**
   * Receives every application frame: reliable ones in order and each once per peer stream. If it throws
   * or rejects, a reliable frame is tried again after each of `handlerRetryDelaysMs` and then refused
   * (reported through `onRefused` on both sides, and skipped); an unreliable one is dropped.
   */
  onFrame(frame: AppFrame, receipt?: Receipt): void | Promise<void>;
  /**
   * Told of each reliable frame the channel skipped: one this side refused, or one of ours the peer
   * refused. The channel has moved on; tell the user or operator in plain words. A `sent` refusal is
   * reported at most once: if the connection drops before the peer's `refused` frame arrives, the
   * handshake acknowledges the frame without it.
   */
  onRefused?(refusal: Refusal): void;
  /**
   * Told when a connection becomes ready (with what the peer's handshake said of it: its instance, and
   * its release and host when it named them) and when it is lost.
   */
  onConnectionChange?(state: {
    connected: boolean;
    peerInstanceId?: string;
    peerRelease?: string;
    peerHost?: string;
  }): void;
  /** Told of each ping's round trip on the ready connection, in ms (see `ConnectionOptions.onRoundTrip`). */
  onRoundTrip?(ms: number): void;
  /** Told when this side refuses a peer at its handshake (see `ConnectionOptions.onHandshakeRefused`). */
  onHandshakeRefused?(refusal: { code: ProtocolErrorCode; message: string }): void;
  logger?: Logger;
  /** Largest frame body accepted, in bytes; default 16 MiB. */
  maxFrameBytes?: number;
  /** How often an idle connection is pinged; default 5 s. */
  pingIntervalMs?: number;
  /** A peer silent this long is dropped; default 15 s. */
  pingTimeoutMs?: number;
  /** A peer that has not completed its handshake this long after connecting is dropped; default 5 s. */
  handshakeTimeoutMs?: number;
  /** Delays before each retry of a failing handler; default `[100, 1000]` (three attempts). */
  handlerRetryDelaysMs?: readonly number[];
  /** This process's id in handshakes and logs; random by default. */
  instanceId?: string;
  /** This side's Switchyard release, named in the handshake (a version mismatch says what each runs). */
  release?: string;
  /** This side's host name in the handshake; default `os.hostname()`. */
  host?: string;
  /** Time for pings, deadlines, handler retries and reconnects; default `systemClock` (`clock.ts`). */
  clock?: Clock;
}

/** The channel's own frames, which an application never sends. */
const CONTROL_TYPES = new Set<FrameType>(['hello', 'welcome', 'ack', 'ping', 'pong', 'error', 'refused']);
/**
 * What stamping `seq` adds to an encoded frame at most: the key (4 bytes), the number (9), and a map
 * header that may grow from fixmap to map16 (2).
 */
const SEQ_BYTES = 15;

/**
 * Frames {@link frameProblem} found fine, with the encoding it measured and the limit it measured
 * against: `send` of the same object under the same limit writes these bytes instead of checking and
 * encoding again (the gateway checks each user message before it is stored, then sends it). Taken out
 * by that send; entries of frames never sent go with the frames.
 */
const checkedBefore = new WeakMap<AppFrame, { bytes: Buffer; maxFrameBytes: number }>();

/**
 * Why the receiver would refuse `frame`, or `undefined` if it would take it: the same schema, the same
 * plain-data rule and the same size limit as the receiving side applies. A frame found fine must not be
 * changed before it is sent: the send writes what this check encoded.
 */
export function frameProblem(
  frame: AppFrame,
  maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES,
): string | undefined {
  const checked = checkFrame(frame, maxFrameBytes);
  if (!checked.ok) return checked.problem;
  checkedBefore.set(frame, { bytes: checked.bytes, maxFrameBytes });
  return undefined;
}

/** {@link checkFrame}, or what {@link frameProblem} found for this very frame under the same limit. */
function checkOnce(
  frame: AppFrame,
  maxFrameBytes: number,
): { ok: true; bytes: Buffer } | { ok: false; problem: string } {
  const before = checkedBefore.get(frame);
  if (before === undefined) return checkFrame(frame, maxFrameBytes);
  checkedBefore.delete(frame);
  return before.maxFrameBytes === maxFrameBytes
    ? { ok: true, bytes: before.bytes }
    : checkFrame(frame, maxFrameBytes);
}

/**
 * {@link frameProblem}, keeping the encoding it measured: `bytes` is the frame as it goes on the wire
 * (without `seq`; {@link withSeq} numbers it), so a sent frame is encoded once.
 */
function checkFrame(
  frame: AppFrame,
  maxFrameBytes: number,
): { ok: true; bytes: Buffer } | { ok: false; problem: string } {
  const type = (frame as { type?: unknown }).type;
  if (CONTROL_TYPES.has(type as FrameType))
    return { ok: false, problem: `"${String(type)}" is a control frame, which the channel sends itself` };
  const parsed = parseFrame(frame);
  if (!parsed.ok) return { ok: false, problem: parsed.message };
  const plain = plainDataProblem(frame);
  if (plain) return { ok: false, problem: `frame of type "${frame.type}" ${plain}` };
  // A frame handed back from a store may still carry its old number: the wire's is stamped by `withSeq`.
  const bytes = encodeFrame('seq' in frame ? withoutSeq(frame) : frame);
  const size = bytes.length - 4 + SEQ_BYTES;
  if (size > maxFrameBytes) {
    return {
      ok: false,
      problem: `frame of type "${frame.type}" is ${size} bytes encoded, over the ${maxFrameBytes}-byte frame limit`,
    };
  }
  return { ok: true, bytes };
}

/**
 * Sends through the current connection; shared by server and client. The frame is encoded once: the
 * size check's encoding is what goes on the wire, numbered in place ({@link withSeq}).
 */
export function sendThrough(
  store: ChannelStore,
  current: () => Connection | undefined,
  frame: AppFrame,
  maxFrameBytes: number | undefined,
  origin?: FrameOrigin,
): Promise<void> {
  const checked = checkOnce(frame, maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
  if (!checked.ok) {
    return rejected(
      `cannot send this frame: ${checked.problem}. It was not queued: cut user text to the limits in ` +
        "@switchyard/protocol's frames (src/common/messages/, USER_MESSAGE_LIMITS) before sending",
    );
  }
  const reliable = RELIABLE_TYPES.has(frame.type);
  const seq = reliable ? store.append(frame, origin) : undefined;
  const write = (): Promise<void> => {
    const connection = current();
    if (!connection?.ready) return Promise.resolve();
    const bytes = seq === undefined ? checked.bytes : withSeq(checked.bytes, seq);
    return connection.writeEncoded(frame.type, seq, bytes);
  };
  const whenDurable = store.whenDurable?.bind(store);
  if (!whenDurable) return write();
  // Written once durable (see `ChannelStore.whenDurable`); a live delta waits too, so it never
  // overtakes a reliable frame appended before it.
  return new Promise((resolve, reject) =>
    whenDurable((failed) => {
      if (failed === undefined) resolve(write());
      else reject(failed);
    }),
  );
}

/** `frame` without its `seq` key. */
function withoutSeq(frame: AppFrame): Omit<AppFrame, 'seq'> {
  const { seq: _numbered, ...rest } = frame as AppFrame & { seq?: number };
  return rest;
}

/** A refusal as a rejected promise, never a throw: a caller's loop (the bridge's stdout pump) goes on. */
function rejected(message: string): Promise<never> {
  return Promise.reject(new ProtocolError(message));
}

/** A random id for this process, sent in the handshake so logs can tell a restart from a reconnect. */
export function newInstanceId(): string {
  return randomUUID();
}

/** What `onConnectionChange` says of a peer whose handshake completed. */
export function peerOf(peer: FrameOf<'hello'> | FrameOf<'welcome'>): {
  peerInstanceId: string;
  peerRelease?: string;
  peerHost?: string;
} {
  return {
    peerInstanceId: peer.instanceId,
    ...(peer.release !== undefined ? { peerRelease: peer.release } : {}),
    ...(peer.host !== undefined ? { peerHost: peer.host } : {}),
  };
}

/** The connection options both ends derive from their endpoint options in the same way. */
export function connectionOptions(
  options: EndpointOptions,
  role: 'server' | 'client',
  instanceId: string,
  logger: Logger,
): Omit<ConnectionOptions, 'onReady' | 'onClose' | 'admit'> {
  return {
    role,
    agent: options.agent,
    instanceId,
    ...(options.release !== undefined ? { release: options.release } : {}),
    host: options.host ?? hostname(),
    store: options.store,
    logger,
    onFrame: options.onFrame,
    ...(options.onRefused !== undefined ? { onRefused: options.onRefused } : {}),
    ...(options.onRoundTrip !== undefined ? { onRoundTrip: options.onRoundTrip } : {}),
    ...(options.onHandshakeRefused !== undefined ? { onHandshakeRefused: options.onHandshakeRefused } : {}),
    ...(options.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
    ...(options.handlerRetryDelaysMs !== undefined
      ? { handlerRetryDelaysMs: options.handlerRetryDelaysMs }
      : {}),
    ...(options.maxFrameBytes !== undefined ? { maxFrameBytes: options.maxFrameBytes } : {}),
    ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
    ...(options.pingTimeoutMs !== undefined ? { pingTimeoutMs: options.pingTimeoutMs } : {}),
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
  };
}
