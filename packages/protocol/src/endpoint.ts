/**
 * What the server and the client share: the application-facing `Endpoint` handle, which numbers
 * reliable frames into the store and writes them on whichever connection is current.
 */
import { randomUUID } from 'node:crypto';
import type { Connection, ConnectionOptions } from './connection.js';
import type { Logger } from './logger.js';
import { type AppFrame, RELIABLE_TYPES } from './messages.js';
import type { ChannelStore } from './store.js';

/** Both ends of the socket expose the same handle. */
export interface Endpoint {
  /** Server: resolves once listening. Client: starts connecting (does not wait for the peer). */
  start(): Promise<void>;
  /** Closes sockets and timers; resolves when they are gone. Unacknowledged frames stay in the store. */
  stop(): Promise<void>;
  /**
   * Reliable frame types are numbered and appended to the store synchronously, inside this call (so a
   * caller may make the append part of its own transaction), then written now if connected or resent
   * after the next handshake. Other frames are written only when connected, and dropped otherwise.
   * Resolves when the socket can take more: await it, that is the backpressure.
   */
  send(frame: AppFrame): Promise<void>;
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
   * or rejects, the frame is not acknowledged and the connection is dropped, so the peer offers it again.
   */
  onFrame(frame: AppFrame): void | Promise<void>;
  /** Told when a connection becomes ready and when it is lost. */
  onConnectionChange?(state: { connected: boolean; peerInstanceId?: string }): void;
  logger?: Logger;
  /** Largest frame body accepted, in bytes; default 16 MiB. */
  maxFrameBytes?: number;
  /** How often an idle connection is pinged; default 5 s. */
  pingIntervalMs?: number;
  /** A peer silent this long is dropped; default 15 s. */
  pingTimeoutMs?: number;
  /** This process's id in handshakes and logs; random by default. */
  instanceId?: string;
}

/** Sends through the current connection; shared by server and client. */
export function sendThrough(
  store: ChannelStore,
  current: () => Connection | undefined,
  frame: AppFrame,
): Promise<void> {
  const connection = current();
  if (RELIABLE_TYPES.has(frame.type)) {
    const seq = store.append(frame);
    if (connection?.ready) return connection.write({ ...frame, seq } as AppFrame);
    return Promise.resolve();
  }
  if (connection?.ready) return connection.write(frame);
  return Promise.resolve();
}

/** A random id for this process, sent in the handshake so logs can tell a restart from a reconnect. */
export function newInstanceId(): string {
  return randomUUID();
}

/** The connection options both ends derive from their endpoint options in the same way. */
export function connectionOptions(
  options: EndpointOptions,
  role: 'server' | 'client',
  instanceId: string,
  logger: Logger,
): Omit<ConnectionOptions, 'onReady' | 'onClose'> {
  return {
    role,
    agent: options.agent,
    instanceId,
    store: options.store,
    logger,
    onFrame: options.onFrame,
    ...(options.maxFrameBytes !== undefined ? { maxFrameBytes: options.maxFrameBytes } : {}),
    ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
    ...(options.pingTimeoutMs !== undefined ? { pingTimeoutMs: options.pingTimeoutMs } : {}),
  };
}
