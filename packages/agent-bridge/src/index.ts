/**
 * @switchyard/agent-bridge — owns one agent's Claude Code processes, one per conversation: spawns or adopts them, translates its
 * stream-json output into protocol frames for the gateway, and turns the gateway's commands into what
 * the CLI understands. See `createBridge`.
 */
export {
  type Bridge,
  type BridgeOptions,
  type BridgeStatus,
  CONVERSATIONS_DIR,
  conversationDir,
  createBridge,
  SHARED_KEY,
} from './bridge.js';
export {
  ChildError,
  type ChildHandle,
  type ChildRecord,
  type Liveness,
  liveness,
  readStartTime,
  resolveBinary,
} from './child.js';
export type { ConversationSettings } from './conversation.js';
export type { DeliveryStage } from './delivery.js';
export { checkFiles, FILE_LIMITS, type FileTool } from './file-check.js';
export { FileOutbox, type FileRequest, type FileTarget, type ToolOutcome } from './file-outbox.js';
export {
  createFileTools,
  type FilesConfig,
  type FileTools,
  type McpEndpointAddress,
  mergedMcpConfig,
} from './file-tools.js';
export {
  addHistory,
  HISTORY_KEPT,
  HISTORY_TEXT_CHARS,
  type HistoryEntry,
  historyEntryOf,
  mayBeHistory,
} from './history.js';
export { createMcpEndpoint, MCP_PATH, type McpEndpoint } from './mcp/endpoint.js';
export { FILE_TOOL_NAMES, MCP_SERVER_NAME } from './mcp/server.js';
export { compareSource, FileChannelStore, type SourceTag } from './outbox.js';
export {
  type AlwaysAllowScope,
  DEFAULT_PERMISSION_POLICY,
  modeAllowed,
  type PermissionPolicy,
  startMode,
} from './permission-policy.js';
export { Session } from './session.js';
export { initialSessionState, type SessionState, type Step } from './session-state.js';
export { type StdoutLine, StdoutReader } from './stdout-reader.js';
export {
  recordedProcesses,
  type StopRecordedClaudeOptions,
  stopAllRecordedClaude,
  stopRecordedClaude,
} from './stop.js';
export { CLAUDE_STREAM_ARGS, type ClaudeArgsOptions, claudeArgs } from './supervisor.js';
export {
  claudeConfigDir,
  projectDir,
  type TranscriptCursor,
  type TranscriptCursors,
  type TranscriptLine,
  TranscriptTail,
  type TranscriptTailOptions,
} from './transcript.js';
export {
  type CliEvent,
  type CliUsage,
  DEFAULT_MAX_LINE_BYTES,
  translateLine,
  translateMessage,
} from './translator.js';
export {
  renderSlashCommand,
  renderUserMessage,
  stripMessageHeader,
} from './user-input.js';
