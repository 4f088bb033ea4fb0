/** What the gateway sends the bridge: user messages, prompt answers, commands, file receipts. */
import { z } from 'zod';
import { ANSWER_MAX, id, QUESTION_MAX, routeSchema, seq } from './fields.js';

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
/** One of {@link PERMISSION_MODES}. */
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** The gateway's frames' schemas, in the union's order. */
export const GATEWAY_FRAMES = [
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
] as const;
