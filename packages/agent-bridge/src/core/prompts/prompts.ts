/**
 * Permission prompts and questions, as part of the session machine: pure functions on
 * {@link SessionState} (no I/O, no clock), called by `Session` in the order its rules need.
 *
 * - A prompt opens when the CLI sends `control_request {subtype: can_use_tool}`; `AskUserQuestion`
 *   arrives the same way and becomes a `question` frame, anything else a `permission_request`.
 * - It closes when the gateway answers (the `control_response` line is produced here), when the CLI
 *   cancels it, or when the process exits. Closed request ids are remembered (bounded): an `initialize`
 *   answer lists the prompts the CLI had open *when it read the request*, and one closed here in between
 *   must not be offered again.
 * - Recovery: the prompts an `initialize` answer lists that this side does not hold (lost with a crashed
 *   bridge) are replayed as the same `permission` events stdout would have carried.
 */
import { cutEnd, cutMiddle } from '@switchyard/card';
import { type AppFrame, type FrameOf, PROMPT_INPUT_MAX, type Route } from '@switchyard/protocol/common';
import type { SessionState } from '../session/state.js';
import {
  chosenSuggestions,
  describeSuggestion,
  describeToolCall,
  MAX_SUGGESTIONS,
  shortenInput,
  suggestionKind,
  suggestionWhere,
} from '../translate/summary.js';
import { type CliEvent, translateMessage } from '../translate/translator.js';
import { DEFAULT_PERMISSION_POLICY, type PermissionPolicy, scopedSuggestions } from './permission-policy.js';

/** A prompt the CLI asked, as the translator reports it. */
export type PermissionEvent = Extract<CliEvent, { kind: 'permission' }>;

/** More than the prompts that can close between an `initialize` and its answer. */
const CLOSED_PROMPTS_KEPT = 100;

/** What a prompt's wording and suggestions depend on beyond the CLI's request. */
export interface PromptContext {
  policy: PermissionPolicy;
  /** The conversation's working directory: where a `localSettings` rule would apply. */
  workDir: string;
}

/**
 * Records the prompt as open and returns the frame that shows it in the chat of `turn`. The CLI's
 * suggestions are kept as the policy lets them be offered (see `permission-policy.ts`), so what a
 * button says is what its press applies.
 */
export function openPrompt(
  s: SessionState,
  event: PermissionEvent,
  turn: { id: string; route: Route },
  context: PromptContext = { policy: DEFAULT_PERMISSION_POLICY, workDir: '.' },
): FrameOf<'question'> | FrameOf<'permission_request'> {
  const isQuestion = event.toolName === 'AskUserQuestion';
  const suggestions = scopedSuggestions(context.policy, event.suggestions);
  s.prompts[event.requestId] = {
    kind: isQuestion ? 'question' : 'permission',
    toolName: event.toolName,
    input: event.input,
    suggestions,
  };
  const questions = isQuestion ? parseQuestions(event.input) : undefined;
  if (questions) {
    return { type: 'question', requestId: event.requestId, turnId: turn.id, route: turn.route, questions };
  }
  const said = describeToolCall(event.toolName, event.input, event.description);
  return {
    type: 'permission_request',
    requestId: event.requestId,
    turnId: turn.id,
    route: turn.route,
    toolName: cutEnd(event.toolName, 200),
    ...(event.toolUseId !== undefined ? { toolUseId: event.toolUseId } : {}),
    summary: said.summary,
    input: shortenInput(event.input),
    ...(said.cut ? { fullInput: cutMiddle(JSON.stringify(event.input, null, 2), PROMPT_INPUT_MAX) } : {}),
    suggestions: suggestions.slice(0, MAX_SUGGESTIONS).map((suggestion) => {
      const where = suggestionWhere(suggestion, context.workDir);
      return {
        label: describeSuggestion(suggestion),
        kind: suggestionKind(suggestion),
        ...(where !== undefined ? { where } : {}),
      };
    }),
  };
}

/**
 * Closes the prompt the gateway answered and returns the `control_response` line for the CLI, with the
 * frame saying it closed. `undefined` when no such prompt is open (answered already, cancelled, or from
 * before a process restart).
 */
export function answerPrompt(
  s: SessionState,
  frame: FrameOf<'permission_answer'> | FrameOf<'question_answer'>,
  policy: PermissionPolicy = DEFAULT_PERMISSION_POLICY,
): { frame: AppFrame; line: string } | undefined {
  const prompt = s.prompts[frame.requestId];
  if (!prompt) return undefined;
  closePrompt(s, frame.requestId);
  let response: Record<string, unknown>;
  if (frame.type === 'question_answer') {
    response = { behavior: 'allow', updatedInput: { ...prompt.input, answers: frame.answers } };
  } else if (frame.decision === 'deny') {
    response = { behavior: 'deny', message: frame.message ?? 'The user denied this.' };
  } else {
    // Only the CLI's own suggestions, only those the user chose, each applied as the CLI made it: the
    // bridge invents no rules, and a mode change or an added directory is never applied implicitly.
    // The policy again, after choosing: a prompt stored under an older config is held to today's.
    const chosen =
      frame.decision === 'allow_always'
        ? scopedSuggestions(policy, chosenSuggestions(prompt.suggestions, frame.suggestions))
        : [];
    response = {
      behavior: 'allow',
      updatedInput: prompt.input,
      ...(chosen.length > 0 ? { updatedPermissions: chosen } : {}),
    };
  }
  const line = JSON.stringify({
    type: 'control_response',
    response: { subtype: 'success', request_id: frame.requestId, response },
  });
  return { frame: { type: 'prompt_closed', requestId: frame.requestId, reason: 'answered' }, line };
}

/**
 * The answer to a permission request too large to show (its stdout line is over the cap): denied, with
 * the reason, so the CLI does not wait for ever and the model can try a smaller input.
 */
export function denyOversized(event: Extract<CliEvent, { kind: 'oversized_request' }>): string {
  const message =
    `Denied without asking: this request was ${event.bytes} bytes, too large for Switchyard to show ` +
    'the user. Retry with a smaller input (for example, write a large file in several parts).';
  return JSON.stringify({
    type: 'control_response',
    response: {
      subtype: 'success',
      request_id: event.requestId,
      response: { behavior: 'deny', message },
    },
  });
}

/** Forgets an open prompt and remembers its id as closed (bounded). */
export function closePrompt(s: SessionState, requestId: string): void {
  delete s.prompts[requestId];
  s.closedPrompts ??= [];
  const closed = s.closedPrompts;
  closed.push(requestId);
  if (closed.length > CLOSED_PROMPTS_KEPT) closed.splice(0, closed.length - CLOSED_PROMPTS_KEPT);
}

/**
 * The prompts an `initialize` answer says are pending that this side neither holds nor has closed, as
 * `permission` events to handle like stdout's. Lazy: each item is checked against the state as it is when
 * the caller asks for it, after handling the ones before.
 */
export function* recoverablePrompts(
  s: SessionState,
  response: Record<string, unknown> | undefined,
): Generator<PermissionEvent> {
  const pending = response?.pending_permission_requests;
  if (!Array.isArray(pending)) return;
  for (const item of pending) {
    if (typeof item !== 'object' || item === null) continue;
    const record = item as Record<string, unknown>;
    const requestId = typeof record.request_id === 'string' ? record.request_id : undefined;
    if (!requestId || s.prompts[requestId] || s.closedPrompts?.includes(requestId)) continue;
    // 2.1.328 lists the original `control_request` lines verbatim: translate them as stdout would have,
    // so a recovered prompt reads exactly like the one that was lost (description included).
    const events =
      record.type === 'control_request'
        ? translateMessage(record)
        : translateMessage({ type: 'control_request', request_id: requestId, request: record });
    for (const event of events) if (event.kind === 'permission') yield event;
  }
}

function parseQuestions(input: Record<string, unknown>): FrameOf<'question'>['questions'] | undefined {
  if (!Array.isArray(input.questions) || input.questions.length === 0) return undefined;
  const out: FrameOf<'question'>['questions'] = [];
  for (const raw of input.questions.slice(0, 10)) {
    if (typeof raw !== 'object' || raw === null) continue;
    const q = raw as Record<string, unknown>;
    const options = Array.isArray(q.options) ? q.options : [];
    out.push({
      question: cutEnd(String(q.question ?? ''), 4000),
      ...(typeof q.header === 'string' ? { header: cutEnd(q.header, 200) } : {}),
      options: options.slice(0, 20).map((o) => {
        const opt = (o ?? {}) as Record<string, unknown>;
        return {
          label: cutEnd(String(opt.label ?? ''), 500),
          ...(typeof opt.description === 'string' ? { description: cutEnd(opt.description, 2000) } : {}),
        };
      }),
      multiSelect: q.multiSelect === true,
    });
  }
  return out.length > 0 ? out : undefined;
}
