/**
 * `@switchyard/protocol/common`: the protocol's pure part, which a core may import: the frames and their
 * validation, the byte codec, the clock's types, the refusal rules, the logger's type, secret redaction,
 * the wake timer, the store's interface and the rules of a file transfer. Nothing here imports `node:`;
 * biome keeps it so.
 */
export { type Clock, ManualClock, systemClock, type TimerHandle } from './clock.js';
export {
  DEFAULT_MAX_FRAME_BYTES,
  type DecodeEvent,
  encodeFrame,
  FrameDecoder,
  plainDataProblem,
} from './codec.js';
export { ProtocolError } from './errors.js';
export { describeError, type Logger, silentLogger } from './logger.js';
export {
  automationLane,
  conversationKey,
  type Route,
  readsUntrustedInput,
  routeSchema,
} from './messages/fields.js';
export {
  type AppFrame,
  assertNever,
  type BridgeToGateway,
  type ControlFrame,
  type Frame,
  type FrameOf,
  type FrameType,
  frameSchema,
  type GatewayToBridge,
  type ParseResult,
  PROTOCOL_VERSION,
  type ProtocolErrorCode,
  parseFrame,
  RELIABLE_TYPES,
  type RefusalCode,
  type TransferFrame,
} from './messages/frame.js';
export {
  type Attachment,
  DEFAULT_ALLOWED_MODES,
  PERMISSION_MODES,
  type PermissionMode,
  USER_MESSAGE_LIMITS,
} from './messages/to-bridge.js';
export {
  AGENT_STATES,
  type AgentState,
  type OutgoingFile,
  type SessionInfo,
  type TerminalSession,
} from './messages/to-gateway.js';
export { TRANSFER_CHUNK_BYTES, TRANSFER_MAX_BYTES } from './messages/transfer.js';
export { PROMPT_INPUT_MAX, PROMPT_SUMMARY_MAX, SUGGESTION_KINDS, type Usage } from './messages/turn.js';
export { describeStderr, REDACTED, redactSecrets, type StderrClass } from './redact.js';
export type { Refusal } from './refusal.js';
export type {
  ChannelStore,
  FrameOrigin,
  PeerCursor,
  PendingFrame,
  Receipt,
} from './store.js';
export {
  answerChunk,
  answerOffer,
  type ChunkAnswer,
  type OfferAnswer,
  type ReceiverDisk,
} from './transfer/receive.js';
export {
  DEFAULT_TRANSFER_LIMITS,
  type SendAction,
  type SendEvent,
  type SendState,
  type SendStep,
  startSend,
  stepSend,
  type TransferLimits,
} from './transfer/send.js';
export {
  UNTRUSTED_CLOSE,
  UNTRUSTED_INPUT_RULE,
  UNTRUSTED_OPEN,
  untrustedBlock,
  untrustedJson,
} from './untrusted.js';
export { createWakeTimer, type WakeTimer } from './wake-timer.js';
