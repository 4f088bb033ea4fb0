/**
 * The stream-json translator: one line of the CLI's stdout in, a list of {@link CliEvent}s out.
 *
 * Pure and stateless on purpose. Everything that needs memory (which turn is running, which block a
 * delta belongs to, which steer is waiting) lives in `session.ts`, so this file changes only when the
 * CLI's wire format does, and a benchmark of it measures parsing and nothing else.
 * Longer than 400 lines because it is one table from the CLI's line shapes to events, read nowhere else.
 *
 * Why our own narrow types instead of a type-only import of `@anthropic-ai/claude-agent-sdk`
 * (`SDKMessage`, `SDKControlRequest` …): the SDK's types follow the SDK's release train, not the CLI
 * binary the operator actually runs, and this code must survive lines it has never seen (the CLI adds
 * types often). Every field here is read from `unknown` with a runtime check, so a static type that
 * claimed more would only give false confidence — and it would add a large dependency for types alone.
 * The shapes below are the ones measured against 2.1.328 (`reference/claude-cli-probe.md`, the recorded
 * fixtures in `test/fixtures/`).
 */
import { safeSlice } from '@switchyard/card';

/** Lines longer than this (in bytes) are skipped unparsed; a tool result can embed megabytes. */
export const DEFAULT_MAX_LINE_BYTES = 2 * 1024 * 1024;

/** Token counts as the CLI reports them in `result.usage`. */
export interface CliUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** `parent` is the Task/Agent tool-use id for sub-agent lines, `null` for the main agent. */
export type CliEvent =
  | { kind: 'init'; sessionId: string; model?: string; permissionMode?: string }
  | { kind: 'status'; status: string | null }
  | { kind: 'model_call_started'; parent: string | null; messageId: string }
  | { kind: 'block_started'; parent: string | null; index: number; blockType: string }
  | { kind: 'text_delta'; parent: string | null; index: number; text: string }
  | { kind: 'text'; parent: string | null; messageId: string; text: string }
  | { kind: 'thinking'; parent: string | null; text: string }
  | { kind: 'tool_use'; parent: string | null; id: string; name: string; input: Record<string, unknown> }
  | { kind: 'tool_result'; parent: string | null; toolUseId: string; isError: boolean; errorText?: string }
  | {
      kind: 'result';
      subtype: string;
      isError: boolean;
      text?: string;
      /** HTTP status of the API failure that ended the turn (`api_error_status`), when it was one. */
      apiErrorStatus?: number;
      /** The turn ended on the login's usage limit (`api_error: usage_limit_reached`, or the CLI's text). */
      usageLimited?: boolean;
      usage?: CliUsage;
      costUsd?: number;
      durationMs?: number;
    }
  | {
      kind: 'permission';
      requestId: string;
      toolName: string;
      input: Record<string, unknown>;
      suggestions: unknown[];
      toolUseId?: string;
      description?: string;
    }
  /**
   * The subscription's usage limit refused a model call: `rate_limit_event` with `status: rejected`, or
   * the synthetic assistant message the CLI prints for it ("You've hit your limit · resets 5:37am (UTC)").
   * `resetsAt` (epoch ms) when the CLI said it.
   */
  | { kind: 'usage_limit'; resetsAt?: number; limitType?: string }
  | { kind: 'control_request_other'; requestId: string; subtype: string }
  | {
      kind: 'control_response';
      requestId: string;
      ok: boolean;
      error?: string;
      response?: Record<string, unknown>;
    }
  | { kind: 'control_cancel'; requestId: string }
  | { kind: 'conversation_reset' }
  | { kind: 'compacted' }
  | { kind: 'task_started'; taskId: string; toolUseId?: string; description?: string; subagentType?: string }
  | { kind: 'task_notification'; taskId: string; toolUseId?: string; status: string; summary?: string }
  | {
      kind: 'api_error';
      category: 'rate_limit' | 'overloaded' | 'auth' | 'api_error';
      message: string;
      /** How long until a retry may work, when the CLI said so as a delay. */
      retryAfterMs?: number;
    }
  /**
   * The CLI read a stdin `user` line that carried a `uuid` and queued it (`command_lifecycle`, state
   * `queued`, `command_uuid` = that uuid). Printed within milliseconds of the read, before any later stdin
   * line is handled, and only for lines that carry a `uuid` (measured on 2.1.328). The bridge's proof that
   * a line reached the process (see `delivery.ts`, exactly once into the CLI). The later states (`started`,
   * `completed`) say nothing the turn events do not, and are not translated.
   */
  | { kind: 'input_queued'; uuid: string }
  /**
   * A turn took user messages (`--replay-user-messages` echoes each one as it goes into a model call):
   * the Telegram messages named by their headers' `inbound=` markers.
   */
  | { kind: 'input_taken'; inboundIds: string[] }
  | { kind: 'skipped'; reason: 'oversized' | 'malformed'; bytes: number }
  /**
   * A `control_request` on a line over the cap, known only from the line's head: it cannot be shown,
   * but the CLI waits for its answer, so it must still get one (see {@link translateOversized}).
   */
  | { kind: 'oversized_request'; requestId: string; subtype: string; bytes: number };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/**
 * Translates one stdout line. `bytes` is the line's length in bytes (the reader counts them anyway);
 * a line over `maxLineBytes` is never handed to `JSON.parse`. Blank lines, lines that are not JSON
 * objects and unknown types yield `[]` or a `skipped` event — never a throw.
 */
export function translateLine(
  line: string,
  bytes: number = Buffer.byteLength(line),
  maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
): CliEvent[] {
  if (bytes > maxLineBytes)
    return translateOversized({ head: line.slice(0, 4096), tail: line.slice(-4096), bytes });
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return line.trim() === '' ? [] : [{ kind: 'skipped', reason: 'malformed', bytes }];
  }
  if (!isObject(value)) return [{ kind: 'skipped', reason: 'malformed', bytes }];
  return translateMessage(value);
}

/**
 * A line over the cap, from its two ends only (never parsed whole): `skipped`, and what the line still
 * says that must not be lost. The CLI waits for an answer to a `control_request`, whose `request_id` and
 * `subtype` it writes first (before the tool's input); and a turn's `result` (over the cap when it
 * repeats a denied tool's whole input in `permission_denials`) ends the turn, its `type`, `subtype` and
 * `is_error` written last. A key counts only right after `{` or `,`, which inside a JSON string would be
 * escaped, and at the end the last occurrence is taken, after any nested copy.
 */
export function translateOversized(line: { head?: string; tail?: string; bytes: number }): CliEvent[] {
  const skipped: CliEvent = { kind: 'skipped', reason: 'oversized', bytes: line.bytes };
  const head = line.head ?? '';
  const tail = line.tail ?? '';
  if (/^\s*\{\s*"type"\s*:\s*"control_request"\s*,/.test(head)) {
    const input = head.indexOf('"input"');
    const before = input < 0 ? head : head.slice(0, input);
    const requestId = /[{,]\s*"request_id"\s*:\s*"([^"\\]{1,200})"/.exec(before)?.[1];
    const subtype = /[{,]\s*"subtype"\s*:\s*"([a-z_]{1,50})"/.exec(before)?.[1];
    if (requestId && subtype)
      return [skipped, { kind: 'oversized_request', requestId, subtype, bytes: line.bytes }];
    return [skipped];
  }
  const last = (pattern: RegExp): string | undefined => [...tail.matchAll(pattern)].at(-1)?.[1];
  if (last(/[{,]\s*"type"\s*:\s*"([a-z_]+)"\s*[,}]/g) === 'result') {
    const subtype = last(/[{,]\s*"subtype"\s*:\s*"([a-z_]{1,50})"/g);
    const isError = last(/[{,]\s*"is_error"\s*:\s*(true|false)/g);
    if (subtype && isError) return [skipped, { kind: 'result', subtype, isError: isError === 'true' }];
  }
  return [skipped];
}

/** Translates one already-parsed stdout message. */
export function translateMessage(message: Json): CliEvent[] {
  const parent = str(message.parent_tool_use_id) ?? null;
  switch (message.type) {
    case 'system':
      return translateSystem(message);
    case 'stream_event':
      return translateStreamEvent(message.event, parent);
    case 'assistant':
      return translateAssistant(message, parent);
    case 'user':
      return translateUser(message, parent);
    case 'result':
      return [translateResult(message)];
    case 'control_request':
      return translateControlRequest(message);
    case 'control_response':
      return translateControlResponse(message);
    case 'command_lifecycle': {
      const uuid = str(message.command_uuid);
      return uuid !== undefined && message.state === 'queued' ? [{ kind: 'input_queued', uuid }] : [];
    }
    case 'control_cancel_request': {
      const requestId = str(message.request_id);
      return requestId ? [{ kind: 'control_cancel', requestId }] : [];
    }
    case 'conversation_reset':
      return [{ kind: 'conversation_reset' }];
    case 'rate_limit_event': {
      const info = isObject(message.rate_limit_info) ? message.rate_limit_info : {};
      // `allowed` and `allowed_warning` are informational; only a refusal stops the work.
      if (info.status !== 'rejected') return [];
      return [usageLimitOf(info)];
    }
    default:
      return [];
  }
}

function translateSystem(message: Json): CliEvent[] {
  switch (message.subtype) {
    case 'init': {
      const sessionId = str(message.session_id);
      if (!sessionId) return [];
      const model = str(message.model);
      const permissionMode = str(message.permissionMode);
      return [
        {
          kind: 'init',
          sessionId,
          ...(model !== undefined ? { model } : {}),
          ...(permissionMode !== undefined ? { permissionMode } : {}),
        },
      ];
    }
    case 'status':
      return [{ kind: 'status', status: str(message.status) ?? null }];
    case 'compact_boundary':
      return [{ kind: 'compacted' }];
    case 'task_started': {
      const taskId = str(message.task_id);
      if (!taskId) return [];
      const toolUseId = str(message.tool_use_id);
      const description = str(message.description);
      const subagentType = str(message.subagent_type);
      return [
        {
          kind: 'task_started',
          taskId,
          ...(toolUseId !== undefined ? { toolUseId } : {}),
          ...(description !== undefined ? { description } : {}),
          ...(subagentType !== undefined ? { subagentType } : {}),
        },
      ];
    }
    case 'task_notification': {
      const taskId = str(message.task_id);
      if (!taskId) return [];
      const toolUseId = str(message.tool_use_id);
      const summary = str(message.summary);
      return [
        {
          kind: 'task_notification',
          taskId,
          status: str(message.status) ?? 'completed',
          ...(toolUseId !== undefined ? { toolUseId } : {}),
          ...(summary !== undefined ? { summary } : {}),
        },
      ];
    }
    case 'api_retry': {
      const status = num(message.error_status);
      const error = str(message.error) ?? 'unknown';
      const delay = num(message.retry_delay_ms);
      const attempt = num(message.attempt);
      const max = num(message.max_retries);
      return [
        {
          kind: 'api_error',
          category: classifyApiError(status, error),
          message: `API ${status ?? 'error'} (${error}); retry ${attempt ?? '?'} of ${max ?? '?'}`,
          ...(delay !== undefined ? { retryAfterMs: delay } : {}),
        },
      ];
    }
    default:
      return [];
  }
}

/** The CLI's words for a refused usage limit (2.1.328: "You've hit your limit · resets 5:37am (UTC)"). */
export const USAGE_LIMIT_TEXT = /\byou(?:'|’)ve hit your (?:usage )?limit\b/i;

/** A `usage_limit` event from a `rate_limit_info` object (its `resetsAt` is in epoch seconds). */
function usageLimitOf(info: Json): CliEvent {
  const resetsAt = num(info.resetsAt);
  const limitType = str(info.rateLimitType);
  return {
    kind: 'usage_limit',
    ...(resetsAt !== undefined ? { resetsAt: resetsAt * 1000 } : {}),
    ...(limitType !== undefined ? { limitType: limitType.slice(0, 100) } : {}),
  };
}

/** Maps an HTTP status and the CLI's error label onto the operator event kinds. */
export function classifyApiError(
  status: number | undefined,
  error: string,
): 'rate_limit' | 'overloaded' | 'auth' | 'api_error' {
  if (status === 429 || /rate.?limit/i.test(error)) return 'rate_limit';
  if (status === 529 || /overloaded/i.test(error)) return 'overloaded';
  if (status === 401 || status === 403 || /auth|api key|credential/i.test(error)) return 'auth';
  return 'api_error';
}

function translateStreamEvent(event: unknown, parent: string | null): CliEvent[] {
  if (!isObject(event)) return [];
  switch (event.type) {
    case 'message_start': {
      const msg = isObject(event.message) ? event.message : {};
      return [{ kind: 'model_call_started', parent, messageId: str(msg.id) ?? '' }];
    }
    case 'content_block_start': {
      const index = num(event.index);
      const block = isObject(event.content_block) ? event.content_block : {};
      return index === undefined
        ? []
        : [{ kind: 'block_started', parent, index, blockType: str(block.type) ?? '' }];
    }
    case 'content_block_delta': {
      const index = num(event.index);
      const delta = isObject(event.delta) ? event.delta : {};
      if (index === undefined || delta.type !== 'text_delta') return [];
      const text = str(delta.text);
      return text ? [{ kind: 'text_delta', parent, index, text }] : [];
    }
    default:
      return [];
  }
}

function translateAssistant(message: Json, parent: string | null): CliEvent[] {
  const msg = isObject(message.message) ? message.message : undefined;
  if (!msg || !Array.isArray(msg.content)) return [];
  const messageId = str(msg.id) ?? '';
  const events: CliEvent[] = [];
  // The CLI marks a synthetic assistant message carrying an API failure. Its text ("API Error: 529 …
  // check your inference gateway (host:port)") is for an operator, not a Telegram reply: it becomes an
  // operator event only, and the failed `result` that follows tells the user in plain words.
  if (
    message.isApiErrorMessage === true ||
    message.is_api_error_message === true ||
    typeof message.error === 'string'
  ) {
    const text = msg.content
      .map((block) => (isObject(block) ? (str(block.text) ?? '') : ''))
      .join('')
      .slice(0, 2000);
    // The usage limit's own message (2.1.328 prints it for every turn the limit refuses, after one
    // `rate_limit_event`): the limit's reset, not an error for anyone to read.
    if (message.api_error === 'usage_limit_reached' || USAGE_LIMIT_TEXT.test(text)) {
      const params = isObject(message.api_error_params) ? message.api_error_params : {};
      return [usageLimitOf(isObject(params.rate_limit_info) ? params.rate_limit_info : {})];
    }
    return [
      {
        kind: 'api_error',
        category: classifyApiError(undefined, `${str(message.error) ?? ''} ${text}`),
        message: text,
      },
    ];
  }
  for (const block of msg.content) {
    if (!isObject(block)) continue;
    switch (block.type) {
      case 'text': {
        const text = str(block.text);
        if (text) events.push({ kind: 'text', parent, messageId, text });
        break;
      }
      case 'thinking': {
        const text = str(block.thinking);
        if (text) events.push({ kind: 'thinking', parent, text });
        break;
      }
      case 'tool_use': {
        const id = str(block.id);
        const name = str(block.name);
        if (id && name)
          events.push({
            kind: 'tool_use',
            parent,
            id,
            name,
            input: isObject(block.input) ? block.input : {},
          });
        break;
      }
      default:
        break;
    }
  }
  return events;
}

/** The `inbound=` marker at the end of a message header line (see `user-input.ts`). */
const HEADER_MARKER = /^\[telegram [^\n]* inbound=([^\s\]]+)\]$/gm;

function translateUser(message: Json, parent: string | null): CliEvent[] {
  const msg = isObject(message.message) ? message.message : undefined;
  if (!msg || !Array.isArray(msg.content)) return [];
  if (message.isReplay === true) {
    if (parent !== null) return [];
    const inboundIds: string[] = [];
    for (const block of msg.content) {
      if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') continue;
      for (const match of block.text.matchAll(HEADER_MARKER)) inboundIds.push(match[1] as string);
    }
    return inboundIds.length > 0 ? [{ kind: 'input_taken', inboundIds }] : [];
  }
  const events: CliEvent[] = [];
  for (const block of msg.content) {
    if (!isObject(block) || block.type !== 'tool_result') continue;
    const toolUseId = str(block.tool_use_id);
    if (!toolUseId) continue;
    const isError = block.is_error === true;
    events.push({
      kind: 'tool_result',
      parent,
      toolUseId,
      isError,
      ...(isError ? { errorText: safeSlice(contentText(block.content), 0, 4000) } : {}),
    });
  }
  return events;
}

/** The plain text of a tool result's `content`: a string, or text blocks joined by newlines. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => (isObject(block) && block.type === 'text' ? (str(block.text) ?? '') : ''))
    .filter((text) => text !== '')
    .join('\n');
}

function translateResult(message: Json): CliEvent {
  const usage = isObject(message.usage) ? message.usage : undefined;
  const cost = num(message.total_cost_usd);
  const duration = num(message.duration_ms);
  const text = str(message.result);
  const apiErrorStatus = num(message.api_error_status);
  const cacheRead = usage ? num(usage.cache_read_input_tokens) : undefined;
  const cacheWrite = usage ? num(usage.cache_creation_input_tokens) : undefined;
  return {
    kind: 'result',
    subtype: str(message.subtype) ?? 'success',
    isError: message.is_error === true,
    ...(text !== undefined ? { text } : {}),
    ...(apiErrorStatus !== undefined ? { apiErrorStatus } : {}),
    ...(message.api_error === 'usage_limit_reached' ||
    (message.is_error === true && USAGE_LIMIT_TEXT.test(text ?? ''))
      ? { usageLimited: true }
      : {}),
    ...(usage
      ? {
          usage: {
            inputTokens: num(usage.input_tokens) ?? 0,
            outputTokens: num(usage.output_tokens) ?? 0,
            ...(cacheRead !== undefined ? { cacheReadTokens: cacheRead } : {}),
            ...(cacheWrite !== undefined ? { cacheWriteTokens: cacheWrite } : {}),
          },
        }
      : {}),
    ...(cost !== undefined ? { costUsd: cost } : {}),
    ...(duration !== undefined ? { durationMs: duration } : {}),
  };
}

function translateControlRequest(message: Json): CliEvent[] {
  const requestId = str(message.request_id);
  const request = isObject(message.request) ? message.request : undefined;
  if (!requestId || !request) return [];
  if (request.subtype !== 'can_use_tool') {
    return [{ kind: 'control_request_other', requestId, subtype: str(request.subtype) ?? '' }];
  }
  const toolUseId = str(request.tool_use_id);
  const description = str(request.description);
  return [
    {
      kind: 'permission',
      requestId,
      toolName: str(request.tool_name) ?? 'unknown',
      input: isObject(request.input) ? request.input : {},
      suggestions: Array.isArray(request.permission_suggestions) ? request.permission_suggestions : [],
      ...(toolUseId !== undefined ? { toolUseId } : {}),
      ...(description !== undefined ? { description } : {}),
    },
  ];
}

function translateControlResponse(message: Json): CliEvent[] {
  const response = isObject(message.response) ? message.response : undefined;
  const requestId = response ? str(response.request_id) : undefined;
  if (!response || !requestId) return [];
  const ok = response.subtype === 'success';
  const error = str(response.error);
  return [
    {
      kind: 'control_response',
      requestId,
      ok,
      ...(error !== undefined ? { error } : {}),
      ...(isObject(response.response) || Array.isArray(response.pending_permission_requests)
        ? {
            // 2.1.328 puts `pending_permission_requests` beside the payload, not inside it.
            response: {
              ...(isObject(response.response) ? response.response : {}),
              ...(Array.isArray(response.pending_permission_requests)
                ? { pending_permission_requests: response.pending_permission_requests }
                : {}),
            },
          }
        : {}),
    },
  ];
}
