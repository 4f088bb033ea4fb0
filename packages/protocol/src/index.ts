/**
 * @switchyard/protocol — the typed channel between the gateway (listens) and an agent's bridge
 * (connects): the frame union and its validation, the byte codec, and the reliable socket endpoints.
 */

export { type ClientOptions, createProtocolClient } from './client.js';
export { type Clock, ManualClock, systemClock, type TimerHandle } from './clock.js';
export {
  DEFAULT_MAX_FRAME_BYTES,
  type DecodeEvent,
  encodeFrame,
  FrameDecoder,
  plainDataProblem,
} from './codec.js';
export { HANDSHAKE_MAX_FRAME_BYTES } from './connection.js';
export { type Endpoint, type EndpointOptions, frameProblem } from './endpoint.js';
export { ProtocolError } from './errors.js';
export {
  copyIntoExchange,
  type ExchangeOptions,
  exchangeModes,
  type OpenedExchangeFile,
  openExchangeFile,
  prepareExchange,
  writeExchangeFile,
} from './exchange.js';
export { describeError, type Logger, silentLogger } from './logger.js';
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
  PROMPT_INPUT_MAX,
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
} from './messages.js';
export { describeStderr, REDACTED, redactSecrets, type StderrClass } from './redact.js';
export type { Refusal } from './refusal.js';
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
  type ChannelStore,
  createMemoryChannelStore,
  type FrameOrigin,
  type PeerCursor,
  type PendingFrame,
  type Receipt,
} from './store.js';
export { createWakeTimer, type WakeTimer } from './wake-timer.js';
