/**
 * `@switchyard/protocol/node`: the protocol's Node part, for shells only: the connection over a socket,
 * the server and client endpoints, the socket path, the state directory's lock, the file exchange, files
 * over the protocol (`transfer.ts`) and the in-memory store.
 */
export { type ClientOptions, createProtocolClient } from './client.js';
export { HANDSHAKE_MAX_FRAME_BYTES } from './connection-options.js';
export { type Endpoint, type EndpointOptions, frameProblem } from './endpoint.js';
export {
  copyIntoExchange,
  deleteOlderFiles,
  type ExchangeOptions,
  exchangeModes,
  type OpenedExchangeFile,
  openExchangeFile,
  prepareExchange,
  writeExchangeFile,
} from './exchange.js';
export { createMemoryChannelStore } from './memory-store.js';
export {
  createProtocolServer,
  MAX_HANDSHAKING,
  MAX_SOCKET_PATH_BYTES,
  prepareSocketPath,
  type ServerOptions,
} from './server.js';
export {
  prepareSocketDirectory,
  shortSocketPath,
  shortSocketRoot,
  socketPathFits,
} from './socket-path.js';
export {
  type LockHolder,
  type LockOutcome,
  lockStateDir,
  readStartTime,
  STATE_LOCK_FILE,
  type StateLock,
  stateLockHolder,
} from './state-lock.js';
export {
  createTransferPeer,
  type PutOutcome,
  type TransferPeer,
  type TransferPeerOptions,
} from './transfer.js';
