/**
 * @switchyard/protocol — the typed channel between the gateway (listens) and an agent's bridge
 * (connects): the frame union and its validation, the byte codec, and the reliable socket endpoints.
 */

export { type Clock, ManualClock, systemClock, type TimerHandle } from './common/clock.js';
export {
  DEFAULT_MAX_FRAME_BYTES,
  type DecodeEvent,
  encodeFrame,
  FrameDecoder,
  plainDataProblem,
} from './common/codec.js';
export { ProtocolError } from './common/errors.js';
export { describeError, type Logger, silentLogger } from './common/logger.js';
export {
  AGENT_STATES,
  type AgentState,
  type AppFrame,
  type Attachment,
  assertNever,
  type BridgeToGateway,
  type ControlFrame,
  conversationKey,
  DEFAULT_ALLOWED_MODES,
  type Frame,
  type FrameOf,
  type FrameType,
  frameSchema,
  type GatewayToBridge,
  type OutgoingFile,
  type ParseResult,
  PERMISSION_MODES,
  type PermissionMode,
  PROMPT_SUMMARY_MAX,
  PROTOCOL_VERSION,
  type ProtocolErrorCode,
  parseFrame,
  RELIABLE_TYPES,
  type RefusalCode,
  type Route,
  routeSchema,
  type SessionInfo,
  SUGGESTION_KINDS,
  type TerminalSession,
  USER_MESSAGE_LIMITS,
  type Usage,
} from './common/messages.js';
export { describeStderr, REDACTED, redactSecrets, type StderrClass } from './common/redact.js';
export type { Refusal } from './common/refusal.js';
export {
  type ChannelStore,
  createMemoryChannelStore,
  type FrameOrigin,
  type PeerCursor,
  type PendingFrame,
  type Receipt,
} from './common/store.js';
export { createWakeTimer, type WakeTimer } from './common/wake-timer.js';
export { type ClientOptions, createProtocolClient } from './node/client.js';
export { HANDSHAKE_MAX_FRAME_BYTES } from './node/connection.js';
export { type Endpoint, type EndpointOptions, frameProblem } from './node/endpoint.js';
export {
  copyIntoExchange,
  type ExchangeOptions,
  exchangeModes,
  type OpenedExchangeFile,
  openExchangeFile,
  prepareExchange,
  writeExchangeFile,
} from './node/exchange.js';
export {
  createProtocolServer,
  MAX_HANDSHAKING,
  MAX_SOCKET_PATH_BYTES,
  prepareSocketPath,
  type ServerOptions,
} from './node/server.js';
export {
  prepareSocketDirectory,
  shortSocketPath,
  shortSocketRoot,
  socketPathFits,
} from './node/socket-path.js';
export {
  type LockHolder,
  type LockOutcome,
  lockStateDir,
  readStartTime,
  STATE_LOCK_FILE,
  type StateLock,
  stateLockHolder,
} from './node/state-lock.js';
