/**
 * @switchyard/agent-bridge — owns one agent's Claude Code processes, one per conversation: spawns or
 * adopts them, translates their stream-json output into protocol frames for the gateway, and turns the
 * gateway's commands into what the CLI understands. See `createBridge`.
 *
 * This is the package's public face: only what other packages (the cli, the end-to-end tests) use.
 */
export { createBridge } from './bridge.js';
export { CLAUDE_STREAM_ARGS, claudeArgs } from './core/process/claude-args.js';
export { initialSessionState } from './core/session/state.js';
export {
  type ChildRecord,
  type Liveness,
  liveness,
  readStartTime,
  resolveBinary,
} from './io/process/child.js';
export { recordedProcesses, stopAllRecordedClaude, stopRecordedClaude } from './io/process/stop.js';
export {
  type Bridge,
  type BridgeOptions,
  type BridgeStatus,
  CONVERSATIONS_DIR,
  conversationDir,
  SHARED_KEY,
} from './options.js';
