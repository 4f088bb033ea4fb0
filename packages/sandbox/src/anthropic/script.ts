/**
 * Scripts: what the scripted model answers. A script is a list of rules; a rule matches the latest user
 * text and lists the steps of that turn, one per model call: a reply (text, thinking, tool calls), an
 * API error, or a hang. After the CLI sends tool results back, the next step is served.
 *
 * Which step a request gets is derived from the request itself — the number of assistant messages since
 * the user's text — plus the number of failures already served for that turn, so the CLI's own retries
 * (after a 529, say) move past an error step while a re-sent request never skips a reply. Each
 * conversation (the main agent, each sub-agent) advances through its own rule independently.
 *
 * ```ts
 * const model = createScriptedModel({
 *   script: [
 *     rule('hello', say('Hi **there**')),
 *     rule(/write a file/, bash('echo hi > out.txt', 'Write a file'), say('Done.')),
 *     rule('flaky', overloaded(), say('Worked on the retry.')),
 *   ],
 * });
 * ```
 */

import type { Reply, ReplyBlock } from './reply.js';
import type { RequestView, ToolResult } from './request.js';

/** An API error answer. The CLI usually retries 429/529/5xx by itself. */
export interface ErrorStep {
  readonly type: 'error';
  /** HTTP status: 529 overloaded, 429 rate limited, 500 api error, 401 authentication, or any other. */
  readonly status: number;
  /** The Anthropic `error.type` (derived from the status when omitted). */
  readonly errorType?: string;
  readonly message?: string;
  /** Seconds, sent as the `retry-after` header. */
  readonly retryAfterSeconds?: number;
  /** Serve this error for this many consecutive requests (default 1), e.g. to outlast the CLI's retries. */
  readonly times?: number;
  /** More response headers (the unified rate-limit headers of {@link usageLimited}, say). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Never answers: the request stays open until the client gives up or the model is stopped. */
export interface HangStep {
  readonly type: 'hang';
}

/** One model call's worth of script. */
export type Step = Reply | ErrorStep | HangStep;

/** What a rule or step function sees. */
export interface TurnContext extends RequestView {
  /** Index of the step being served in this turn (0 for the call that answers the user's text). */
  readonly step: number;
  /** Tool results of the last message, paired with the tool call that asked for them (when in this turn). */
  readonly lastToolResults: readonly ToolResult[];
}

/** A step, or a function choosing it when it is served (e.g. from `ctx.lastToolResults`). */
export type StepSource = Step | ((ctx: TurnContext) => Step);

/** How a rule recognises its turn: substring, regular expression, or predicate on the context. */
export type Matcher = string | RegExp | ((ctx: TurnContext) => boolean);

/** One scripted turn. */
export interface Rule {
  readonly match: Matcher;
  /** Which callers the rule answers (default: `main` and `subagent`). */
  readonly kinds?: readonly RequestView['kind'][];
  readonly steps: readonly StepSource[];
}

/** A script: rules tried in order, a fallback for unmatched text, and the answer to side calls. */
export interface Script {
  readonly rules: readonly Rule[];
  /** Steps when no rule matches (default: one reply echoing the text). */
  readonly fallback?: (ctx: TurnContext) => readonly StepSource[];
  /** The answer to a `side` request (default: a short plain-text reply). */
  readonly side?: (ctx: TurnContext) => Reply;
  /**
   * What to answer once a turn's steps are used up, e.g. after the last tool result (default: a short
   * text ending the turn).
   */
  readonly exhausted?: (ctx: TurnContext) => Step;
}

// ── builders ────────────────────────────────────────────────────────────────────────────────────────

/** A rule answering user text that matches `match` with `steps`, one per model call. */
export function rule(match: Matcher, ...steps: StepSource[]): Rule {
  return { match, steps };
}

/** Options shared by the reply builders. */
export interface ReplyOptions {
  readonly chunkSize?: number;
  readonly chunkDelayMs?: number;
  /** See {@link Reply.startDelayMs}. */
  readonly startDelayMs?: number;
}

/** A reply made of the given blocks (a text before tool calls, several tool calls in parallel…). */
export function reply(blocks: readonly ReplyBlock[], options: ReplyOptions = {}): Reply {
  return { type: 'reply', blocks, ...options };
}

/** A text reply that ends the turn, streamed in chunks. */
export function say(text: string, options: ReplyOptions = {}): Reply {
  return reply([{ type: 'text', text }], options);
}

/** A reply that thinks, then says `text`. */
export function thinkThenSay(thinking: string, text: string, options: ReplyOptions = {}): Reply {
  return reply(
    [
      { type: 'thinking', thinking },
      { type: 'text', text },
    ],
    options,
  );
}

/** A text block. */
export function text(value: string): ReplyBlock {
  return { type: 'text', text: value };
}

/** A tool call block; several in one `reply([...])` are parallel calls. */
export function toolUse(name: string, input: unknown, id?: string): ReplyBlock {
  return id === undefined ? { type: 'tool_use', name, input } : { type: 'tool_use', name, input, id };
}

/** A reply calling one tool (optionally after a short text). */
export function callTool(
  name: string,
  input: unknown,
  options: ReplyOptions & { readonly say?: string } = {},
): Reply {
  const { say: before, ...rest } = options;
  return reply(before === undefined ? [toolUse(name, input)] : [text(before), toolUse(name, input)], rest);
}

/** A reply calling `Bash` (asks for permission in the default mode). */
export function bash(command: string, description = 'Run a command'): Reply {
  return callTool('Bash', { command, description });
}

/** A reply calling `Write` (asks for permission in the default mode); `filePath` must be absolute. */
export function write(filePath: string, content: string): Reply {
  return callTool('Write', { file_path: filePath, content });
}

/** A reply calling `Read`; `filePath` must be absolute. Inside the working directory it needs no permission. */
export function read(filePath: string): Reply {
  return callTool('Read', { file_path: filePath });
}

/**
 * A reply calling one of Switchyard's file tools (`mcp__switchyard__send_file`, `…send_photo`,
 * `…send_files`), which the bridge lets run without a permission prompt.
 */
export function sendFile(path: string, caption?: string): Reply {
  return callTool('mcp__switchyard__send_file', caption === undefined ? { path } : { path, caption });
}

/** A reply calling `mcp__switchyard__send_photo` (see {@link sendFile}). */
export function sendPhoto(path: string, caption?: string): Reply {
  return callTool('mcp__switchyard__send_photo', caption === undefined ? { path } : { path, caption });
}

/** A reply calling `mcp__switchyard__send_files`: an album (see {@link sendFile}). */
export function sendFiles(paths: readonly string[], caption?: string): Reply {
  return callTool('mcp__switchyard__send_files', caption === undefined ? { paths } : { paths, caption });
}

/** Input of the sub-agent tool. */
export interface AgentInput {
  readonly description: string;
  readonly prompt: string;
  readonly subagent_type?: string;
  readonly run_in_background?: boolean;
}

/**
 * A reply starting a sub-agent. The pinned CLI offers the tool to the model as `Agent` (its
 * `system/init` lists it as `Task`). The sub-agent's own requests carry `prompt` as their user text, so a
 * rule matching the prompt scripts the sub-agent.
 */
export function agent(input: AgentInput, toolName = 'Agent'): Reply {
  return callTool(toolName, { subagent_type: 'general-purpose', ...input });
}

/** One question of `AskUserQuestion`. */
export interface Question {
  readonly question: string;
  readonly header: string;
  readonly options: readonly { readonly label: string; readonly description: string }[];
  readonly multiSelect?: boolean;
}

/** A reply calling `AskUserQuestion`; the CLI turns it into a `can_use_tool` control request. */
export function ask(...questions: Question[]): Reply {
  return callTool('AskUserQuestion', {
    questions: questions.map((q) => ({ multiSelect: false, ...q })),
  });
}

/** HTTP 529 `overloaded_error`. */
export function overloaded(times = 1): ErrorStep {
  return { type: 'error', status: 529, times };
}

/** HTTP 429 `rate_limit_error` with a `retry-after` header. */
export function rateLimited(retryAfterSeconds = 1, times = 1): ErrorStep {
  return { type: 'error', status: 429, retryAfterSeconds, times };
}

/**
 * HTTP 429 as a subscription's usage limit answers it: the unified rate-limit headers with status
 * `rejected` and the reset at `resetsAtSeconds` (epoch s), the five-hour window named, no overage. A CLI
 * logged in with `CLAUDE_CODE_OAUTH_TOKEN` reports it as `rate_limit_event` rejected and does not retry;
 * one with an API key retries after `retry-after` (measured on 2.1.328, `reference/claude-cli-probe.md`).
 */
export function usageLimited(resetsAtSeconds: number, nowSeconds = Math.floor(Date.now() / 1000)): ErrorStep {
  const reset = String(Math.floor(resetsAtSeconds));
  return {
    type: 'error',
    status: 429,
    message: "This request would exceed your account's rate limit. Please try again later.",
    retryAfterSeconds: Math.max(1, Math.ceil(resetsAtSeconds - nowSeconds)),
    headers: {
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-reset': reset,
      'anthropic-ratelimit-unified-representative-claim': 'five_hour',
      'anthropic-ratelimit-unified-5h-status': 'rejected',
      'anthropic-ratelimit-unified-5h-reset': reset,
      'anthropic-ratelimit-unified-overage-status': 'rejected',
    },
  };
}

/** Any API error: 500 `api_error`, 401 `authentication_error`, … */
export function apiError(status: number, options: Omit<ErrorStep, 'type' | 'status'> = {}): ErrorStep {
  return { type: 'error', status, ...options };
}

/** A request that is never answered. */
export function hang(): HangStep {
  return { type: 'hang' };
}

// ── resolution ──────────────────────────────────────────────────────────────────────────────────────

/** The error `type` the real API uses for a status. */
export function errorTypeFor(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}

/** True when the rule answers this context. */
export function matches(r: Rule, ctx: TurnContext): boolean {
  const kinds = r.kinds ?? ['main', 'subagent'];
  if (!kinds.includes(ctx.kind)) return false;
  if (typeof r.match === 'string') return ctx.userText.includes(r.match);
  if (r.match instanceof RegExp) {
    r.match.lastIndex = 0;
    return r.match.test(ctx.userText);
  }
  return r.match(ctx);
}

/** The steps of the turn `ctx` belongs to: the first matching rule's, else the fallback's. */
export function stepsFor(script: Script, ctx: TurnContext): readonly StepSource[] {
  for (const r of script.rules) if (matches(r, ctx)) return r.steps;
  return script.fallback?.(ctx) ?? [say(`(scripted model) You said: ${ctx.userText}`)];
}

/**
 * Expands `times` so that step positions count requests: an error served three times takes three
 * positions. Functions are expanded lazily (as one position) since their result is unknown in advance.
 */
export function positionOf(steps: readonly StepSource[], index: number): StepSource | undefined {
  let i = index;
  for (const s of steps) {
    const width = typeof s === 'function' || s.type !== 'error' ? 1 : Math.max(1, s.times ?? 1);
    if (i < width) return s;
    i -= width;
  }
  return undefined;
}

/** The default answer once a turn's steps are used up. */
export function defaultExhausted(ctx: TurnContext): Step {
  const denied = ctx.lastToolResults.some((r) => r.isError);
  return say(denied ? 'Understood, I did not do that.' : 'Done.');
}

/** The default answer to a side call. */
export function defaultSide(_ctx: TurnContext): Reply {
  return say('Scripted conversation');
}
