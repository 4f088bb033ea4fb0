/**
 * The listening end (the gateway). One bridge at a time: while a bridge's connection is open, a newcomer
 * is refused at its handshake (`already_connected`), before it is sent or changes anything, until the
 * current one is gone — closed by its peer, or dropped for missing its ping deadline. A restarted bridge
 * thus waits (its client retries) rather than taking the channel from a live one.
 *
 * At most {@link MAX_HANDSHAKING} connections may be waiting for their handshake at once; more are
 * closed at once, and each must finish within `handshakeTimeoutMs`.
 */
import { promises as fs, type Stats } from 'node:fs';
import net from 'node:net';
import { dirname } from 'node:path';
import { ProtocolError } from '../common/errors.js';
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
import { MAX_SOCKET_PATH_BYTES, prepareSocketDirectory } from './socket-path.js';

/** Options of the listening end (the gateway). */
export interface ServerOptions extends EndpointOptions {
  /**
   * File mode of the socket, exactly (the umask does not narrow it); default 0o600. 0o660 lets the
   * socket's group connect: under systemd the agent's user, whose group owns the runtime directory.
   */
  socketMode?: number;
  /**
   * When given, the socket's directory is created if missing and set to exactly this mode at start
   * (0o750 for the agent's group to reach the socket, 0o700 for nobody else). Absent: left as it is.
   */
  directoryMode?: number;
}

/** How many connections may be waiting for their handshake at once. */
export const MAX_HANDSHAKING = 4;

export { MAX_SOCKET_PATH_BYTES } from './socket-path.js';

/** Creates the gateway's end of the channel. Nothing happens until `start()`. */
export function createProtocolServer(options: ServerOptions): Endpoint {
  const log = (options.logger ?? silentLogger).child({ component: 'protocol-server' });
  const instanceId = options.instanceId ?? newInstanceId();
  const connections = new Set<Connection>();
  const handshaking = new Set<Connection>();
  let current: Connection | undefined;
  let currentPeer = '';
  let server: net.Server | undefined;

  const onSocket = (socket: net.Socket): void => {
    if (handshaking.size >= MAX_HANDSHAKING) {
      log.warn(
        { event: 'too_many_handshakes', limit: MAX_HANDSHAKING },
        'closing a connection: too many are waiting for their handshake',
      );
      socket.destroy();
      return;
    }
    const connection: Connection = new Connection(socket, {
      ...connectionOptions(options, 'server', instanceId, log),
      admit(peer) {
        if (!current || current.closed) return undefined;
        return {
          code: 'already_connected',
          message:
            `another bridge (instance ${currentPeer}) is connected for agent "${options.agent}", so instance ` +
            `${peer.instanceId} is refused: stop the other bridge, or retry once it has gone ` +
            '(a silent one is dropped when it misses its ping deadline)',
        };
      },
      onReady(peer) {
        handshaking.delete(connection);
        current = connection;
        currentPeer = peer.instanceId;
        options.onConnectionChange?.({ connected: true, ...peerOf(peer) });
      },
      onClose() {
        handshaking.delete(connection);
        connections.delete(connection);
        if (current === connection) {
          current = undefined;
          options.onConnectionChange?.({ connected: false });
        }
      },
    });
    connections.add(connection);
    if (!connection.closed && !connection.ready) handshaking.add(connection);
  };

  return {
    get connected() {
      return current?.ready ?? false;
    },
    async start() {
      if (server) return;
      prepareSocketDirectory(options.socketPath);
      if (options.directoryMode !== undefined) {
        const dir = dirname(options.socketPath);
        await fs.mkdir(dir, { recursive: true, mode: 0o700 });
        await fs.chmod(dir, options.directoryMode);
      }
      await prepareSocketPath(options.socketPath);
      const listening = net.createServer(onSocket);
      const mode = options.socketMode ?? 0o600;
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        // The umask closes the window between bind() and chmod() in which others could connect.
        const previousUmask = process.umask(0o777 & ~mode);
        try {
          listening.listen(options.socketPath, () => {
            listening.off('error', reject);
            resolve();
          });
        } finally {
          process.umask(previousUmask);
        }
      });
      await fs.chmod(options.socketPath, mode);
      listening.on('error', (err) =>
        log.error({ event: 'server_error', err: describeError(err) }, 'socket server error'),
      );
      server = listening;
      log.info({ event: 'listening', socket: options.socketPath }, 'waiting for the bridge');
    },
    async stop() {
      const listening = server;
      server = undefined;
      for (const connection of connections) connection.close('gateway stopping');
      if (listening) {
        await new Promise<void>((resolve) => listening.close(() => resolve()));
      }
    },
    send(frame) {
      return sendThrough(options.store, () => current, frame, options.maxFrameBytes);
    },
  };
}

/**
 * Makes the socket path usable: checks its length, removes a stale socket left by a crashed run (only
 * once a connection to it is refused: nothing listens), and refuses to take over a socket another
 * process is still listening on.
 */
export async function prepareSocketPath(socketPath: string): Promise<void> {
  const bytes = Buffer.byteLength(socketPath);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new ProtocolError(
      `socket path is ${bytes} bytes, over the ${MAX_SOCKET_PATH_BYTES}-byte limit of Unix sockets: ` +
        `choose a shorter runtime directory (${socketPath})`,
    );
  }
  let stat: Stats;
  try {
    stat = await fs.lstat(socketPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (!stat.isSocket()) {
    throw new ProtocolError(`${socketPath} exists and is not a socket: remove it or choose another path`);
  }
  if (await isListening(socketPath)) {
    throw new ProtocolError(
      `another process is already listening on ${socketPath}: is a second gateway running for this agent? ` +
        'stop it, or give this one another runtime directory',
    );
  }
  await fs.unlink(socketPath).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

function isListening(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
