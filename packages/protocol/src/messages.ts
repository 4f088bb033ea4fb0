/**
 * The wire vocabulary between the gateway and an agent's bridge: one discriminated union on `type`,
 * declared once, with its runtime schema beside it. Everything that crosses the socket is a `Frame`.
 *
 * Direction is a convention, not a separate type: `GatewayToBridge` names what the gateway sends,
 * `BridgeToGateway` what the bridge sends, and `Control` frames (handshake, ack, ping, error) flow both
 * ways. Receivers validate every frame with {@link parseFrame} and switch on `type`.
 *
 * Reliability: frames whose type is in {@link RELIABLE_TYPES} carry `seq`, stamped by the channel; the
 * sender keeps them until acknowledged and resends them after a reconnect. Everything else is
 * fire-and-forget (live text deltas, pings, acks).
 */
import { z } from 'zod';

/** Bumped on any incompatible change to this file. Peers with different versions refuse each other. */
export const PROTOCOL_VERSION = 2;

const id = z.string().min(1).max(200);
const chatId = z.number().int();
const seq = z.number().int().positive();
const text = z.string().max(1_000_000);
// A question's limits bound its answer's: the answer is keyed by the question and may join every label.
const QUESTION_MAX = 4000;
const LABEL_MAX = 500;
const OPTIONS_MAX = 20;
const ANSWER_MAX = OPTIONS_MAX * (LABEL_MAX + 2);

/** Where a turn's output goes in Telegram: a chat, and a forum topic inside it when there is one. */
export const routeSchema = z.object({ chatId, threadId: z.number().int().optional() });
/** Where a turn's output goes: a chat, and a forum topic in it. */
export type Route = z.infer<typeof routeSchema>;

/**
 * The id of the conversation a route belongs to: the chat, or one topic of a forum (`<chatId>` or
 * `<chatId>:<threadId>`). Each conversation is its own Claude session; frames that belong to one carry
 * its route, and this is the one place a route becomes a key.
 */
export function conversationKey(route: Route): string {
  return route.threadId === undefined ? `${route.chatId}` : `${route.chatId}:${route.threadId}`;
}

// ---------------------------------------------------------------------------------------------------
// Control frames (both directions)

const hello = z.object({
  type: z.literal('hello'),
  version: z.number().int(),
  agent: id,
  /** Random per process start; lets the peer tell a restart from a reconnect in its logs. */
  instanceId: id,
  /** Identifies the sender's outbox. A new stream (state wiped) resets the receiver's duplicate filter. */
  streamId: id,
  /** The peer stream this side has seen, and the last `seq` it handled from it (0 if none). */
  peerStreamId: z.string().max(200).optional(),
  lastSeen: z.number().int().nonnegative(),
});
const welcome = hello.extend({ type: z.literal('welcome') });
const ack = z.object({ type: z.literal('ack'), seq: z.number().int().nonnegative() });
const ping = z.object({ type: z.literal('ping'), nonce: z.number().int() });
const pong = z.object({ type: z.literal('pong'), nonce: z.number().int() });
/** A protocol-level failure. The sender closes the connection after writing it. */
const error = z.object({
  type: z.literal('error'),
  code: z.enum([
    'bad_frame',
    'bad_message',
    'version_mismatch',
    'wrong_agent',
    'too_large',
    'sequence_gap',
    'internal',
    'handshake_timeout',
    'already_connected',
  ]),
  message: z.string().max(2000),
});
/**
 * The receiver could not take the reliable frame numbered `seq` (invalid, or its handler kept failing):
 * it counts as handled, and the sender drops it from its outbox. The connection stays open.
 */
const refused = z.object({
  type: z.literal('refused'),
  seq,
  code: z.enum(['invalid', 'handler_failed']),
  message: z.string().max(2000),
});

// ---------------------------------------------------------------------------------------------------
// Gateway → bridge

/**
 * Limits of the `user_message` fields whose content a Telegram client chose (UTF-16 units, or items):
 * the gateway cuts what it is sent to them at intake, so no user's message fails validation here.
 */
export const USER_MESSAGE_LIMITS = {
  senderName: 300,
  username: 100,
  text: 1_000_000,
  attachments: 20,
  fileName: 500,
  mime: 200,
  quote: 4096,
  forwardName: 300,
} as const satisfies Record<string, number>;

const attachment = z.object({
  kind: z.enum(['photo', 'document']),
  /** Absolute path of the file the gateway saved. */
  path: z.string().min(1).max(4096),
  name: z.string().max(USER_MESSAGE_LIMITS.fileName).optional(),
  mime: z.string().max(USER_MESSAGE_LIMITS.mime).optional(),
  size: z.number().int().nonnegative().optional(),
});
/** A file a user sent, saved by the gateway and passed to the bridge by path. */
export type Attachment = z.infer<typeof attachment>;

const userMessage = z.object({
  type: z.literal('user_message'),
  seq: seq.optional(),
  /** The gateway's durable id for this inbound message; stable across resends. */
  inboundId: id,
  route: routeSchema,
  telegramMessageId: z.number().int(),
  sender: z.object({
    id: z.number().int(),
    name: z.string().max(USER_MESSAGE_LIMITS.senderName),
    username: z.string().max(USER_MESSAGE_LIMITS.username).optional(),
  }),
  text: z.string().max(USER_MESSAGE_LIMITS.text),
  attachments: z.array(attachment).max(USER_MESSAGE_LIMITS.attachments),
  replyTo: z
    .object({
      messageId: z.number().int(),
      text: z.string().max(USER_MESSAGE_LIMITS.quote).optional(),
      /**
       * Who wrote the quoted message: the bot, a user on the allowlist, or someone else — whose words
       * reach the model only as quoted third-party text, never as a request.
       */
      author: z.enum(['bot', 'allowed', 'third_party']).optional(),
    })
    .optional(),
  /**
   * A forwarded message: the text is its original author's, not the sender's. Named by Telegram's
   * `forward_origin` (a user's name, a chat's or channel's title); `author` as for `replyTo`, so a third
   * party's words reach the model as material to read, never as the sender's request.
   */
  forwardedFrom: z
    .object({
      name: z.string().max(USER_MESSAGE_LIMITS.forwardName),
      author: z.enum(['bot', 'allowed', 'third_party']),
    })
    .optional(),
  /** Unix ms when Telegram says it was sent. */
  sentAt: z.number(),
  /**
   * A turn nobody typed: a schedule's due time or a webhook's delivery (`automation/inject.ts`). The
   * model is told it comes from that source, not from a person; `sender` then names the source too.
   */
  origin: z.object({ kind: z.enum(['schedule', 'webhook']), name: z.string().min(1).max(200) }).optional(),
});

const permissionAnswer = z.object({
  type: z.literal('permission_answer'),
  seq: seq.optional(),
  requestId: id,
  decision: z.enum(['allow', 'allow_always', 'deny']),
  /**
   * With `allow_always`: the indexes (into the request's `suggestions`) of the suggestions the user chose
   * to apply. Absent: the `addRules` ones, which is what the "always allow" button lists.
   */
  suggestions: z.array(z.number().int().min(0).max(19)).max(20).optional(),
  /** Shown to the model on deny. */
  message: z.string().max(2000).optional(),
});

const questionAnswer = z.object({
  type: z.literal('question_answer'),
  seq: seq.optional(),
  requestId: id,
  /**
   * Question text → chosen label(s) (joined by ", " for multi-select) or the user's free text. The key
   * takes any question (`question.question`), the value a Telegram message (4096) or every label.
   */
  answers: z.record(z.string().max(QUESTION_MAX), z.string().max(ANSWER_MAX)),
});

/** Commands are answered with a `command_result` carrying the same `commandId`. */
const commandFields = { seq: seq.optional(), commandId: id, route: routeSchema };
const interrupt = z.object({ type: z.literal('interrupt'), ...commandFields });
const setModel = z.object({
  type: z.literal('set_model'),
  ...commandFields,
  model: z.string().min(1).max(200),
});
/** The CLI's permission modes, as `/mode` and `set_mode` accept them. */
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions'] as const;
/**
 * The modes a conversation may be in unless the operator's `allowedModes` says otherwise: every mode but
 * `bypassPermissions`, which is the operator's choice, never a chat command's.
 */
export const DEFAULT_ALLOWED_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan'];
const setMode = z.object({ type: z.literal('set_mode'), ...commandFields, mode: z.enum(PERMISSION_MODES) });
const compact = z.object({ type: z.literal('compact'), ...commandFields });
const clear = z.object({ type: z.literal('clear'), ...commandFields });
const statusRequest = z.object({ type: z.literal('status_request'), commandId: id, route: routeSchema });
/** `/rename`: the conversation's display name in `/sessions`. */
const rename = z.object({
  type: z.literal('rename'),
  ...commandFields,
  name: z.string().min(1).max(200),
});
/** Ends the conversation's Claude process (it resumes with `--resume` at its next message). */
const stopSession = z.object({ type: z.literal('stop_session'), ...commandFields });
/** Asks for the agent's conversations (`/sessions`); answered with `sessions`. Not reliable. */
const sessionsRequest = z.object({ type: z.literal('sessions_request'), commandId: id });
/**
 * `/resume`: asks for one page of the Claude sessions of the conversation's working directory (from
 * Claude's own transcripts), newest first; answered with `resume_list`. Not reliable.
 */
const resumeListRequest = z.object({
  type: z.literal('resume_list_request'),
  commandId: id,
  route: routeSchema,
  page: z.number().int().nonnegative().max(10_000).optional(),
});
/**
 * Continue `sessionId` (one of the working directory's sessions) in this conversation: its process stops
 * and the next message starts `claude --resume <sessionId>`. Refused while another process may be writing
 * that session. Answered with `command_result`.
 */
const resumeSession = z.object({ type: z.literal('resume_session'), ...commandFields, sessionId: id });
/**
 * `/handoff`: stop the conversation's process (at once when idle, else after the running turn; `now`
 * interrupts the turn first) and answer `handoff_result` with the session to continue at the terminal.
 */
const handoff = z.object({ type: z.literal('handoff'), ...commandFields, now: z.boolean().optional() });
/**
 * Reset the conversation and remove its git worktree (refused while it has uncommitted changes, which the
 * answer lists). Answered with `command_result`.
 */
const worktreeRemove = z.object({ type: z.literal('worktree_remove'), ...commandFields });

// Files the agent sends (see `fileSend` below): the gateway's answer once Telegram has them, or why not.
/** Telegram took the files (`messageIds`), or refused them for good (`error`). Idempotent by `fileId`. */
const fileSent = z.object({
  type: z.literal('file_sent'),
  seq: seq.optional(),
  fileId: id,
  ok: z.boolean(),
  messageIds: z.array(z.number().int()).max(10).optional(),
  error: z.string().max(2000).optional(),
});

// ---------------------------------------------------------------------------------------------------
// Bridge → gateway

/** Every turn event names its turn; the gateway maps turns to Telegram messages. */
const turnId = id;
const usage = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  cacheReadTokens: z.number().nonnegative().optional(),
  cacheWriteTokens: z.number().nonnegative().optional(),
});

const turnStarted = z.object({
  type: z.literal('turn_started'),
  seq: seq.optional(),
  turnId,
  route: routeSchema,
  /** The inbound messages that opened the turn; empty for a turn the CLI started by itself. */
  inboundIds: z.array(id),
  /** The text of the request, for the card's header (first message only, may be cut). */
  request: z.string().max(4096),
  startedAt: z.number(),
});

const turnEnded = z.object({
  type: z.literal('turn_ended'),
  seq: seq.optional(),
  turnId,
  outcome: z.enum(['success', 'error', 'interrupted']),
  /** Plain words for the user when the outcome is not success. */
  error: z.string().max(4000).optional(),
  usage: usage.optional(),
  /** What this turn cost (the difference of the CLI's cumulative cost before and after it). */
  costUsd: z.number().nonnegative().optional(),
  /** What the conversation's session has cost so far (the CLI's cumulative `total_cost_usd`). */
  sessionCostUsd: z.number().nonnegative().optional(),
  durationMs: z.number().nonnegative().optional(),
});

/** Live, unreliable: appended to the block's text. The consolidated `text` frame replaces it. */
const textDelta = z.object({
  type: z.literal('text_delta'),
  turnId,
  blockId: id,
  delta: text,
});

/** Authoritative text of one block. The reply is the turn's blocks in order, joined by blank lines. */
const textBlock = z.object({
  type: z.literal('text'),
  seq: seq.optional(),
  turnId,
  blockId: id,
  text,
});

const thinking = z.object({ type: z.literal('thinking'), seq: seq.optional(), turnId, text });

const toolStarted = z.object({
  type: z.literal('tool_started'),
  seq: seq.optional(),
  turnId,
  toolUseId: id,
  name: z.string().min(1).max(200),
  /** The tool's input with long strings cut, for labels and permission summaries. */
  input: z.record(z.string(), z.unknown()),
});

const toolFinished = z.object({
  type: z.literal('tool_finished'),
  seq: seq.optional(),
  turnId,
  toolUseId: id,
  isError: z.boolean(),
  errorText: z.string().max(4000).optional(),
});

/** Sub-agents are keyed by the parent's Task/Agent tool-use id. They may outlive their turn. */
const subagentStarted = z.object({
  type: z.literal('subagent_started'),
  seq: seq.optional(),
  turnId,
  agentId: id,
  agentType: z.string().max(200),
  description: z.string().max(4000),
  prompt: z.string().max(20_000),
});
const subagentToolStarted = z.object({
  type: z.literal('subagent_tool_started'),
  seq: seq.optional(),
  turnId,
  agentId: id,
  toolUseId: id,
  name: z.string().min(1).max(200),
  input: z.record(z.string(), z.unknown()),
});
const subagentToolFinished = z.object({
  type: z.literal('subagent_tool_finished'),
  seq: seq.optional(),
  turnId,
  agentId: id,
  toolUseId: id,
  isError: z.boolean(),
  errorText: z.string().max(4000).optional(),
});
const subagentText = z.object({
  type: z.literal('subagent_text'),
  seq: seq.optional(),
  turnId,
  agentId: id,
  text,
});
const subagentFinished = z.object({
  type: z.literal('subagent_finished'),
  seq: seq.optional(),
  turnId,
  agentId: id,
  outcome: z.enum(['success', 'error', 'killed']),
});

/** The CLI's `permission_suggestions` types; each kind other than `addRules` is offered on its own button. */
export const SUGGESTION_KINDS = ['addRules', 'setMode', 'addDirectories', 'other'] as const;
const permissionSuggestion = z.object({
  /** What applying it does, in words; the bridge applies the CLI's own suggestion, not this text. */
  label: z.string().max(500),
  kind: z.enum(SUGGESTION_KINDS),
  /** Where it applies, in words: "this conversation", "every conversation in /srv/app". */
  where: z.string().max(300).optional(),
});
/**
 * The longest `summary` a prompt shows: the bridge cuts a longer one to this, keeping its head and its
 * tail around a mark of how much is not shown, so the gateway never has to cut it blind.
 */
export const PROMPT_SUMMARY_MAX = 1500;
const permissionRequest = z.object({
  type: z.literal('permission_request'),
  seq: seq.optional(),
  requestId: id,
  turnId: turnId.optional(),
  route: routeSchema,
  toolName: z.string().min(1).max(200),
  toolUseId: z.string().max(200).optional(),
  /** What the tool will do, in words that follow "Claude wants to" ({@link PROMPT_SUMMARY_MAX}). */
  summary: z.string().max(4000),
  input: z.record(z.string(), z.unknown()),
  /** Present when the CLI offered rules for "always allow". */
  suggestions: z.array(permissionSuggestion).max(20),
});

const questionOption = z.object({
  label: z.string().max(LABEL_MAX),
  description: z.string().max(2000).optional(),
});
const question = z.object({
  type: z.literal('question'),
  seq: seq.optional(),
  requestId: id,
  turnId: turnId.optional(),
  route: routeSchema,
  questions: z
    .array(
      z.object({
        question: z.string().max(QUESTION_MAX),
        header: z.string().max(200).optional(),
        options: z.array(questionOption).max(OPTIONS_MAX),
        multiSelect: z.boolean(),
      }),
    )
    .min(1)
    .max(10),
});

/** A prompt or question is no longer answerable: answered, cancelled by the CLI, or its process died. */
const promptClosed = z.object({
  type: z.literal('prompt_closed'),
  seq: seq.optional(),
  requestId: id,
  reason: z.enum(['answered', 'cancelled', 'exited']),
});

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

// ---------------------------------------------------------------------------------------------------
// The union

/** Runtime schema of every frame; `parseFrame` is the only way input becomes a `Frame`. */
export const frameSchema = z.discriminatedUnion('type', [
  hello,
  welcome,
  ack,
  ping,
  pong,
  error,
  refused,
  userMessage,
  permissionAnswer,
  questionAnswer,
  interrupt,
  setModel,
  setMode,
  compact,
  clear,
  statusRequest,
  rename,
  stopSession,
  sessionsRequest,
  resumeListRequest,
  resumeSession,
  handoff,
  worktreeRemove,
  fileSent,
  turnStarted,
  turnEnded,
  textDelta,
  textBlock,
  thinking,
  toolStarted,
  toolFinished,
  subagentStarted,
  subagentToolStarted,
  subagentToolFinished,
  subagentText,
  subagentFinished,
  permissionRequest,
  question,
  promptClosed,
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
]);

/** Any frame on the wire. */
export type Frame = z.infer<typeof frameSchema>;
/** The tag of a frame. */
export type FrameType = Frame['type'];
/** The member of the union with tag `T`. */
export type FrameOf<T extends FrameType> = Extract<Frame, { type: T }>;

/** Frames the channel itself uses: handshake, acknowledgement, liveness, refusal. */
export type ControlFrame = FrameOf<'hello' | 'welcome' | 'ack' | 'ping' | 'pong' | 'error' | 'refused'>;
/** What the gateway sends the bridge. */
export type GatewayToBridge = FrameOf<
  | 'user_message'
  | 'permission_answer'
  | 'question_answer'
  | 'interrupt'
  | 'set_model'
  | 'set_mode'
  | 'compact'
  | 'clear'
  | 'status_request'
  | 'rename'
  | 'stop_session'
  | 'sessions_request'
  | 'resume_list_request'
  | 'resume_session'
  | 'handoff'
  | 'worktree_remove'
  | 'file_sent'
  | 'schedule_result'
>;
/** What the bridge sends the gateway. */
export type BridgeToGateway = Exclude<Frame, ControlFrame | GatewayToBridge>;
/** Why a peer's input was refused. */
export type ProtocolErrorCode = FrameOf<'error'>['code'];
/** Why a receiver refused one reliable frame (see the `refused` frame). */
export type RefusalCode = FrameOf<'refused'>['code'];
/** One of {@link PERMISSION_MODES}. */
export type PermissionMode = (typeof PERMISSION_MODES)[number];
/** One of {@link AGENT_STATES}. */
export type AgentState = (typeof AGENT_STATES)[number];
/** Token counts of a turn. */
export type Usage = z.infer<typeof usage>;

/**
 * Types the channel numbers, keeps until acknowledged and resends after reconnect.
 * Everything not listed here may be lost with a connection.
 */
export const RELIABLE_TYPES = new Set<FrameType>([
  'user_message',
  'permission_answer',
  'question_answer',
  'interrupt',
  'set_model',
  'set_mode',
  'compact',
  'clear',
  'rename',
  'stop_session',
  'resume_session',
  'handoff',
  'worktree_remove',
  'handoff_result',
  'turn_started',
  'turn_ended',
  'text',
  'thinking',
  'tool_started',
  'tool_finished',
  'subagent_started',
  'subagent_tool_started',
  'subagent_tool_finished',
  'subagent_text',
  'subagent_finished',
  'permission_request',
  'question',
  'prompt_closed',
  'status',
  'message_taken',
  'messages_unread',
  'operator_event',
  'usage_limit',
  'session_waiting',
  'command_result',
  'file_sent',
  'file_send',
  'schedule_request',
  'schedule_result',
]);

/** A frame the channel numbers. */
export type ReliableFrame = Frame & { seq?: number };
/** Frames an application may hand to `send`: everything but the channel's own control frames. */
export type AppFrame = Exclude<Frame, ControlFrame>;

/** The outcome of {@link parseFrame}: a typed frame, or what was wrong with the input. */
export type ParseResult =
  | { ok: true; frame: Frame }
  | { ok: false; code: ProtocolErrorCode; message: string };

/** A schema field name or an array index: safe to name in an error. */
const FIELD_NAME = /^(?:[A-Za-z][A-Za-z0-9]{0,40}|\d{1,6})$/;

/**
 * Validates a decoded value as a frame. Never throws; on failure says which field was wrong, in the
 * form `path: problem` (for example `route.chatId: expected number, received string`).
 */
export function parseFrame(value: unknown): ParseResult {
  const result = frameSchema.safeParse(value);
  if (result.success) return { ok: true, frame: result.data };
  const first = result.error.issues.slice(0, 3).map((issue) => {
    // Record keys are user text (a question, a tool input's key): they are named `[key]`, never quoted.
    const path =
      issue.path.length > 0
        ? issue.path.map((part) => (FIELD_NAME.test(String(part)) ? String(part) : '[key]')).join('.')
        : '(frame)';
    return `${path}: ${issue.message}`;
  });
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  const prefix = typeof type === 'string' ? `frame of type ${JSON.stringify(type.slice(0, 50))}` : 'frame';
  return { ok: false, code: 'bad_message', message: `${prefix} is invalid: ${first.join('; ')}` };
}

/** Exhaustiveness check for `switch (frame.type)`. */
export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
