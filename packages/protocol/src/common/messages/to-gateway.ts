/**
 * What the bridge sends the gateway besides a turn's events: status, what the CLI read, operator events,
 * the usage limit's wait, the process queue, `/sessions` and `/resume`, command results, files and schedules.
 */
import { z } from 'zod';
import { id, routeSchema, seq, turnId } from './fields.js';

/** What the agent is doing, as `/status` shows it. */
export const AGENT_STATES = [
  'starting',
  'idle',
  'running',
  'compacting',
  'awaiting_input',
  /** A subscription's usage limit was reached: the turn waits for its reset (`usage_limit`). */
  'limited',
  'exited',
  'unknown',
] as const;
const status = z.object({
  type: z.literal('status'),
  seq: seq.optional(),
  /** The conversation this is the state of (absent only for an agent-wide answer with none live). */
  route: routeSchema.optional(),
  state: z.enum(AGENT_STATES),
  model: z.string().max(200).optional(),
  mode: z.string().max(100).optional(),
  sessionId: z.string().max(200).optional(),
  turnId: turnId.optional(),
  pid: z.number().int().optional(),
  /** What the conversation has cost so far (USD, all its processes). */
  costUsd: z.number().nonnegative().optional(),
  /** Free text for `/status`, such as the last exit's stderr tail. */
  detail: z.string().max(4000).optional(),
  /** Set when this answers a `status_request`. */
  commandId: z.string().max(200).optional(),
  /** The conversation's own git worktree and branch (`worktree: true`). */
  worktree: z.object({ path: z.string().max(4096), branch: z.string().max(300) }).optional(),
  /** Recent exchanges, oldest first (texts cut short), for `/status`; absent when none are known. */
  history: z
    .array(z.object({ role: z.enum(['user', 'assistant']), text: z.string().max(1000), at: z.number() }))
    .max(20)
    .optional(),
});

/** The CLI read these inbound messages (a steer taken at the next model call, or a turn's opening). */
const messageTaken = z.object({
  type: z.literal('message_taken'),
  seq: seq.optional(),
  turnId,
  inboundIds: z.array(id).min(1),
});

/** Messages the bridge accepted but the CLI never read (it exited, or `/clear` dropped them). */
const messagesUnread = z.object({
  type: z.literal('messages_unread'),
  seq: seq.optional(),
  inboundIds: z.array(id).min(1),
  reason: z.string().max(2000),
});

const operatorEvent = z.object({
  type: z.literal('operator_event'),
  seq: seq.optional(),
  kind: z.enum([
    'rate_limit',
    'auth',
    'overloaded',
    'api_error',
    'cli_missing',
    'cli_exited',
    'crash_loop',
    'stuck',
    'conversation_failed',
    'terminal_session',
  ]),
  message: z.string().max(4000),
  route: routeSchema.optional(),
  turnId: turnId.optional(),
  retryAfterMs: z.number().nonnegative().optional(),
});

/**
 * The conversation's Claude login hit its usage limit (`limited`, once when it is reached) and the turn
 * waits for `resetsAt` with every message kept, or the wait is over and the turn goes on (`resumed`).
 */
const usageLimit = z.object({
  type: z.literal('usage_limit'),
  seq: seq.optional(),
  route: routeSchema,
  /** The turn that waits (it stays open across the wait). */
  turnId: turnId.optional(),
  state: z.enum(['limited', 'resumed']),
  /** When the limit resets (epoch ms), as the CLI said, or the bridge's guess when it said none. */
  resetsAt: z.number().nonnegative(),
  /** Which limit, as the CLI names it (`five_hour`, `seven_day`…). */
  limitType: z.string().max(100).optional(),
});

/** A conversation's message waits for a free Claude process (`maxLiveSessions` are all busy). */
const sessionWaiting = z.object({
  type: z.literal('session_waiting'),
  seq: seq.optional(),
  route: routeSchema,
  inboundIds: z.array(id).min(1),
  /** How many conversations wait before this one. */
  position: z.number().int().nonnegative(),
});

/** One Claude session of a working directory, as `/resume` lists it (from its transcript). */
const terminalSession = z.object({
  sessionId: id,
  /** The transcript's first timestamp (ms), when it has one. */
  startedAt: z.number().optional(),
  /** When the transcript was last written (ms). */
  lastAt: z.number(),
  /** The start of its first user message (cut short), empty when none was found. */
  firstText: z.string().max(500),
  /** This conversation's own session. */
  current: z.boolean().optional(),
  /** Why it cannot be continued now (another process may be writing it). */
  busy: z.string().max(500).optional(),
});
/** One Claude session of a working directory, as `/resume` lists it. */
export type TerminalSession = z.infer<typeof terminalSession>;
const resumeList = z.object({
  type: z.literal('resume_list'),
  commandId: id,
  route: routeSchema,
  /** The conversation's working directory (its worktree, when it has one). */
  workDir: z.string().max(4096),
  page: z.number().int().nonnegative(),
  /** Sessions per page (the first shown is number `page * pageSize + 1`). */
  pageSize: z.number().int().positive().max(20),
  /** How many sessions the directory has in all. */
  total: z.number().int().nonnegative(),
  sessions: z.array(terminalSession).max(20),
  /** Why nothing could be listed (an unreadable directory). */
  error: z.string().max(2000).optional(),
});
/**
 * The answer to `handoff`: `done` (no process runs on the session; `sessionId` and `workDir` say how to
 * continue it at the terminal), `after_turn` (a turn runs: done when it ends), `failed` (`message` says why).
 */
const handoffResult = z.object({
  type: z.literal('handoff_result'),
  seq: seq.optional(),
  commandId: id,
  route: routeSchema,
  outcome: z.enum(['done', 'after_turn', 'failed']),
  sessionId: z.string().max(200).optional(),
  workDir: z.string().max(4096).optional(),
  /** The CLI's config directory, when the agent sets one (`CLAUDE_CONFIG_DIR`): the terminal needs it too. */
  configDir: z.string().max(4096).optional(),
  message: z.string().max(2000).optional(),
});

/** One conversation as `/sessions` lists it. */
const sessionInfo = z.object({
  route: routeSchema,
  name: z.string().max(200).optional(),
  /** Whether it has a Claude process now (an idle one is resumed at its next message). */
  live: z.boolean(),
  state: z.enum(AGENT_STATES),
  turnId: turnId.optional(),
  /** Messages waiting for it: held behind a command, or for a free process. */
  queued: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative(),
  pid: z.number().int().optional(),
  sessionId: z.string().max(200).optional(),
  model: z.string().max(200).optional(),
  lastActiveAt: z.number().optional(),
  /** The conversation's own git worktree (`worktree: true`), when it has one on disk. */
  worktree: z.string().max(4096).optional(),
});
/** One conversation as `/sessions` lists it. */
export type SessionInfo = z.infer<typeof sessionInfo>;
const sessions = z.object({
  type: z.literal('sessions'),
  commandId: id,
  sessions: z.array(sessionInfo).max(1000),
});

const commandResult = z.object({
  type: z.literal('command_result'),
  seq: seq.optional(),
  commandId: id,
  ok: z.boolean(),
  message: z.string().max(4000).optional(),
  /** What a command that ran the model (`/compact`) cost, as the CLI's `result` said (USD). */
  costUsd: z.number().nonnegative().optional(),
});

// Files the agent sends to its conversation (its `send_file`/`send_photo`/`send_files` tools).
const outgoingFile = z.object({
  /** Absolute path of the bridge's copy, made at call time; it does not change until `file_sent`. */
  path: z.string().min(1).max(4096),
  /** The name shown in Telegram. */
  name: z.string().min(1).max(255),
  /** `photo` is shown inline (the bridge checked format and size); `document` is sent as a file. */
  kind: z.enum(['photo', 'document']),
  /** Bytes of the copy: the gateway refuses to upload a copy whose size no longer matches. */
  size: z.number().int().nonnegative(),
});
/** A file (or an album of up to 10) the agent sends to a conversation. */
export type OutgoingFile = z.infer<typeof outgoingFile>;
/**
 * Upload these files to `route` (as a reply to the turn's opening message, when there is one). Sent
 * again with the same `fileId` after a restart; the gateway uploads once per `fileId` and answers every
 * copy with `file_sent`.
 */
const fileSend = z.object({
  type: z.literal('file_send'),
  seq: seq.optional(),
  fileId: id,
  turnId: turnId.optional(),
  route: routeSchema,
  files: z.array(outgoingFile).min(1).max(10),
  /** Markdown, rendered like reply text; on the first file (the album's caption). */
  caption: z.string().max(4096).optional(),
});

// Schedules the agent makes, lists and removes from its conversation (its schedule_* MCP tools): a
// request and its answer, matched by `requestId`. The gateway keeps the schedules; a request sent again
// under the same id changes nothing twice.
const scheduleRequest = z.object({
  type: z.literal('schedule_request'),
  seq: seq.optional(),
  requestId: id,
  /** The conversation the schedule belongs to. */
  route: routeSchema,
  action: z.enum(['add', 'list', 'remove']),
  name: z.string().max(60).optional(),
  /** `add`: a cron pattern (five fields, or six with seconds first), or `at`. */
  cron: z.string().max(200).optional(),
  /** `add`: a one-off time, ISO 8601. */
  at: z.string().max(100).optional(),
  prompt: z.string().max(4000).optional(),
  timezone: z.string().max(100).optional(),
  /** `add`: when it stops, ISO 8601 (no due time after it runs). */
  until: z.string().max(100).optional(),
  /** `remove`: the schedule's id or name. */
  which: z.string().max(200).optional(),
});
/** The gateway's answer to a `schedule_request`: shown to the model as the tool's result. */
const scheduleResult = z.object({
  type: z.literal('schedule_result'),
  seq: seq.optional(),
  requestId: id,
  ok: z.boolean(),
  text: z.string().max(8000),
});
/** One of {@link AGENT_STATES}. */
export type AgentState = (typeof AGENT_STATES)[number];

/** The bridge's other frames' schemas, in the union's order. */
export const BRIDGE_FRAMES = [
  status,
  messageTaken,
  messagesUnread,
  operatorEvent,
  usageLimit,
  sessionWaiting,
  sessions,
  commandResult,
  fileSend,
  scheduleRequest,
  scheduleResult,
  resumeList,
  handoffResult,
] as const;
