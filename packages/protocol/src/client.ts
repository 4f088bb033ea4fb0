/**
 * The connecting end (the bridge). It keeps one connection to the gateway alive: on any loss it
 * reconnects with capped exponential backoff and full jitter, and the handshake resends what the
 * gateway has not acknowledged.
 */
import net from 'node:net';
import { Connection } from './connection.js';
import {
  connectionOptions,
  type Endpoint,
  type EndpointOptions,
  newInstanceId,
  sendThrough,
} from './endpoint.js';
import { describeError, silentLogger } from './logger.js';

export interface ClientOptions extends EndpointOptions {
  /** Reconnect delays: the n-th attempt waits a random time up to `min(maxMs, initialMs * 2^n)`. */
  backoff?: { initialMs: number; maxMs: number };
}

const DEFAULT_BACKOFF = { initialMs: 100, maxMs: 5_000 };

/** Creates the bridge's end of the channel. Nothing happens until `start()`. */
export function createProtocolClient(options: ClientOptions): Endpoint {
  const log = (options.logger ?? silentLogger).child({ component: 'protocol-client' });
  const instanceId = options.instanceId ?? newInstanceId();
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  let current: Connection | undefined;
  let running = false;
  let attempt = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let lastFailure = '';

  const scheduleReconnect = (): void => {
    if (!running || retryTimer) return;
    const ceiling = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt, 20));
    const delay = Math.max(backoff.initialMs / 2, Math.random() * ceiling);
    attempt++;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      connect();
    }, delay);
  };

  const connect = (): void => {
    if (!running) return;
    const socket = net.connect(options.socketPath);
    socket.once('error', (err) => {
      // Before the connection exists: the gateway is not (yet) listening. Log each new reason once.
      const reason = describeError(err);
      if (reason !== lastFailure) {
        log.warn(
          { event: 'connect_failed', socket: options.socketPath, err: reason },
          'cannot reach the gateway; retrying',
        );
        lastFailure = reason;
      }
      socket.destroy();
      scheduleReconnect();
    });
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      if (!running) {
        socket.destroy();
        return;
      }
      let handshakeDone = false;
      const connection: Connection = new Connection(socket, {
        ...connectionOptions(options, 'client', instanceId, log),
        onReady(peer) {
          handshakeDone = true;
          attempt = 0;
          lastFailure = '';
          options.onConnectionChange?.({ connected: true, peerInstanceId: peer.instanceId });
        },
        onClose(reason) {
          if (current === connection) current = undefined;
          if (handshakeDone) options.onConnectionChange?.({ connected: false });
          if (running) log.info({ event: 'disconnected', reason }, 'lost the gateway; reconnecting');
          scheduleReconnect();
        },
      });
      current = connection;
    });
  };

  return {
    get connected() {
      return current?.ready ?? false;
    },
    async start() {
      if (running) return;
      running = true;
      connect();
    },
    async stop() {
      running = false;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      current?.close('bridge stopping');
      current = undefined;
    },
    send(frame) {
      return sendThrough(options.store, () => current, frame);
    },
  };
}
