/**
 * The connecting end (the bridge). It keeps one connection to the gateway alive: on any loss it
 * reconnects with capped exponential backoff and full jitter, and the handshake resends what the
 * gateway has not acknowledged.
 */
import net from 'node:net';
import { systemClock, type TimerHandle } from '../common/clock.js';
import { describeError, silentLogger } from '../common/logger.js';
import { Connection } from './connection.js';
import {
  connectionOptions,
  type Endpoint,
  type EndpointOptions,
  newInstanceId,
  peerOf,
  sendThrough,
} from './endpoint.js';

/** Options of the connecting end (the bridge). */
export interface ClientOptions extends EndpointOptions {
  /** Reconnect delays: the n-th attempt waits a random time up to `min(maxMs, initialMs * 2^n)`. */
  backoff?: { initialMs: number; maxMs: number };
}

const DEFAULT_BACKOFF = { initialMs: 100, maxMs: 5_000 };
/** How long the gateway may be unreachable before that is worth a warning. */
const UNREACHABLE_WARN_MS = 5_000;

/** Creates the bridge's end of the channel. Nothing happens until `start()`. */
export function createProtocolClient(options: ClientOptions): Endpoint {
  const log = (options.logger ?? silentLogger).child({ component: 'protocol-client' });
  const instanceId = options.instanceId ?? newInstanceId();
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const clock = options.clock ?? systemClock;
  let current: Connection | undefined;
  let running = false;
  let attempt = 0;
  let retryTimer: TimerHandle | undefined;
  let lastFailure = '';
  let unreachableSince = clock.now();
  let warned = false;

  const scheduleReconnect = (): void => {
    if (!running || retryTimer) return;
    const ceiling = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt, 20));
    const delay = Math.max(backoff.initialMs / 2, Math.random() * ceiling);
    attempt++;
    retryTimer = clock.setTimeout(() => {
      retryTimer = undefined;
      connect();
    }, delay);
  };

  const connect = (): void => {
    if (!running) return;
    const socket = net.connect(options.socketPath);
    socket.once('error', (err) => {
      // Before the connection exists: the gateway is not (yet) listening. Each new reason is logged once;
      // at startup (the two services start together) it is expected, so it becomes a warning only when
      // the gateway stays unreachable.
      const reason = describeError(err);
      const persistent = clock.now() - unreachableSince > UNREACHABLE_WARN_MS;
      if (reason !== lastFailure || (persistent && !warned)) {
        const fields = { event: 'connect_failed', socket: options.socketPath, err: reason };
        if (persistent) {
          log.warn(fields, 'cannot reach the gateway; retrying');
          warned = true;
        } else {
          log.info(fields, 'gateway not reachable yet; retrying');
        }
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
          warned = false;
          options.onConnectionChange?.({ connected: true, ...peerOf(peer) });
        },
        onClose(reason) {
          if (current === connection) current = undefined;
          if (handshakeDone) unreachableSince = clock.now();
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
      clock.clearTimeout(retryTimer);
      retryTimer = undefined;
      current?.close('bridge stopping');
      current = undefined;
    },
    send(frame, origin) {
      return sendThrough(options.store, () => current, frame, options.maxFrameBytes, origin);
    },
  };
}
