/**
 * What the bridge sends the gateway about one turn: its start and end, text, thinking, tools, sub-agents,
 * and the prompts and questions it waits on.
 */
import { z } from 'zod';
import { id, LABEL_MAX, OPTIONS_MAX, QUESTION_MAX, routeSchema, seq, text, turnId } from './fields.js';

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
/**
 * The longest `fullInput` of a prompt: the whole input of a call whose summary had to leave something
 * out, which the gateway sends as a file before the prompt. An input longer than this (a huge Write) is
 * cut in the middle too, with a count of what is not shown.
 */
export const PROMPT_INPUT_MAX = 1_000_000;
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
  /**
   * The whole input as JSON, present when `summary` could not show all of it ({@link PROMPT_INPUT_MAX}):
   * the gateway posts it as a file before the prompt, so what Allow approves is always there to read.
   */
  fullInput: z.string().max(PROMPT_INPUT_MAX).optional(),
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
/** Token counts of a turn. */
export type Usage = z.infer<typeof usage>;

/** A turn's frames' schemas, in the union's order. */
export const TURN_FRAMES = [
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
] as const;
