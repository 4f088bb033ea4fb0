/**
 * What the CLI says, applied to the session machine: one translated stdout event in, the frames (and
 * lines for the CLI's stdin) it causes appended to the step. The rules are those of `session.ts`'s module
 * comment; this file is their stdout half (a model call, text, tools, prompts, control answers, a turn's
 * `result`), `Session` the half this side starts (a message, a command, a control request, an exit).
 * Each event is handled in one place, here; the turn bookkeeping it shares with the other half
 * (opening a turn, the status frame) is `Session`'s, reached through {@link SessionOps}.
 */
import { safeSlice } from '@switchyard/card';
import { type AgentState, type AppFrame, assertNever, type Route } from '@switchyard/protocol/common';
import {
  closePrompt,
  denyOversized,
  openPrompt,
  type PromptContext,
  recoverablePrompts,
} from '../prompts/prompts.js';
import {
  startSubagent,
  subagentLineFrame,
  subagentTurnOf,
  taskNotified,
  taskStarted,
  toolReturned,
  turnIdFor,
} from '../subagents/subagents.js';
import { shortenInput } from '../translate/summary.js';
import { type CliEvent, classifyApiError } from '../translate/translator.js';
import { controlAnswered, refuseControlRequest } from './controls.js';
import { enterLimit, holdForReset } from './limit.js';
import { recordSession, type SessionState, type Step, type Turn } from './state.js';

/** The session's turn bookkeeping, as the event handlers use it (implemented by `Session`). */
export interface SessionOps {
  readonly state: SessionState;
  /** A turn (or a slash command) is running. */
  readonly running: boolean;
  readonly prompt: PromptContext;
  agentState(): AgentState;
  /** Opens a turn this side or the CLI started, with the next turn id. */
  openTurn(route: Route, commandId?: string): Turn;
  /** The running turn, or one opened for work nobody here started (announced in `step`). */
  proveTurn(now: number, step: Step): Turn;
  /** A status frame when the reported state changes (or `detail` is given). */
  status(state: AgentState, detail?: string): AppFrame[];
  /** No message waits to be read any more. */
  clearAwaiting(): void;
  /** Whether a usage limit is waited out (the turn held open until its reset) rather than failing the turn. */
  readonly waitOutLimit: boolean;
}

export function applyEvent(session: SessionOps, event: CliEvent, now: number, step: Step): void {
  const s = session.state;
  switch (event.kind) {
    case 'init': {
      const resumedBySelf = s.initSeen && !session.running;
      s.initSeen = true;
      s.sessionId = event.sessionId;
      recordSession(s, event.sessionId);
      if (event.model !== undefined) s.model = event.model;
      if (event.permissionMode !== undefined) s.mode = event.permissionMode;
      // The CLI re-announces the session when it picks the conversation back up by itself (after a
      // background task). The first init of a process and the ones inside our own commands open nothing.
      if (resumedBySelf) session.proveTurn(now, step);
      return;
    }
    case 'status': {
      if (event.status === 'compacting') {
        if (!session.running) session.proveTurn(now, step);
        s.compacting = true;
      } else {
        s.compacting = false;
      }
      step.frames.push(...session.status(session.agentState()));
      return;
    }
    case 'model_call_started': {
      if (event.parent !== null) return;
      session.proveTurn(now, step);
      s.messageId = event.messageId;
      delete s.textIndex;
      return;
    }
    case 'input_taken': {
      if (s.turn) {
        s.turn.read = true;
        const unread = s.turn.unread?.filter((id) => !event.inboundIds.includes(id)) ?? [];
        if (unread.length > 0) s.turn.unread = unread;
        else delete s.turn.unread;
      }
      // The proof a steer was read: the model call being made now has it.
      const taken = s.awaiting.filter((id) => event.inboundIds.includes(id));
      if (taken.length > 0) {
        const turn = session.proveTurn(now, step);
        step.frames.push({ type: 'message_taken', turnId: turn.id, inboundIds: taken });
        s.awaiting = s.awaiting.filter((id) => !taken.includes(id));
        // The request a next turn would show is the first message still waiting (its text is in `untaken`).
        const next = s.untaken?.find((m) => m.inboundId === s.awaiting[0]);
        if (next === undefined) session.clearAwaiting();
        else s.awaitingRequest = safeSlice(next.text, 0, 4096);
      }
      const untaken = s.untaken?.filter((m) => !event.inboundIds.includes(m.inboundId)) ?? [];
      if (untaken.length > 0) s.untaken = untaken;
      else delete s.untaken;
      return;
    }
    case 'block_started':
      if (event.parent === null && event.blockType === 'text') s.textIndex = event.index;
      return;
    case 'text_delta': {
      if (event.parent !== null) return;
      const turn = session.proveTurn(now, step);
      step.frames.push({
        type: 'text_delta',
        turnId: turn.id,
        blockId: `${s.messageId ?? 'm'}:${event.index}`,
        delta: event.text,
      });
      return;
    }
    case 'text': {
      if (event.parent !== null) {
        step.frames.push(subagentLineFrame(s, event, event.parent));
        return;
      }
      const turn = session.proveTurn(now, step);
      // The consolidated block arrives before its content_block_stop, so the open block is this one.
      const blockId = `${event.messageId || s.messageId || 'm'}:${s.textIndex ?? 0}`;
      step.frames.push({ type: 'text', turnId: turn.id, blockId, text: event.text });
      return;
    }
    case 'thinking': {
      if (event.parent !== null) return;
      const turn = session.proveTurn(now, step);
      step.frames.push({ type: 'thinking', turnId: turn.id, text: event.text });
      return;
    }
    case 'tool_use': {
      if (event.parent !== null) {
        step.frames.push(subagentLineFrame(s, event, event.parent));
        return;
      }
      const turn = session.proveTurn(now, step);
      step.frames.push({
        type: 'tool_started',
        turnId: turn.id,
        toolUseId: event.id,
        name: event.name,
        input: shortenInput(event.input),
      });
      const started = startSubagent(s, event, turn);
      if (started) step.frames.push(started);
      return;
    }
    case 'tool_result': {
      if (event.parent !== null) {
        step.frames.push(subagentLineFrame(s, event, event.parent));
        return;
      }
      const turnId = turnIdFor(s, null);
      step.frames.push({
        type: 'tool_finished',
        turnId,
        toolUseId: event.toolUseId,
        isError: event.isError,
        ...(event.errorText !== undefined ? { errorText: event.errorText } : {}),
      });
      const finished = toolReturned(s, event.toolUseId, event.isError);
      if (finished) step.frames.push(finished);
      return;
    }
    case 'task_started': {
      if (event.toolUseId === undefined) return;
      taskStarted(s, event.toolUseId);
      return;
    }
    case 'task_notification': {
      if (event.toolUseId === undefined) return;
      step.frames.push(...taskNotified(s, event.toolUseId, event.status));
      return;
    }
    case 'result': {
      endTurn(session, event, step, now);
      return;
    }
    case 'permission': {
      const turn = subagentTurnOf(s, event.toolUseId) ?? session.proveTurn(now, step);
      step.frames.push(openPrompt(s, event, turn, session.prompt), ...session.status(session.agentState()));
      return;
    }
    case 'control_cancel': {
      if (!s.prompts[event.requestId]) return;
      closePrompt(s, event.requestId);
      step.frames.push(
        { type: 'prompt_closed', requestId: event.requestId, reason: 'cancelled' },
        ...session.status(session.agentState()),
      );
      return;
    }
    case 'control_request_other': {
      // Nothing here can answer it; saying so keeps the CLI from waiting for ever.
      step.writes.push(refuseControlRequest(event));
      return;
    }
    case 'oversized_request': {
      // Too large to show anyone, and the CLI waits for an answer: a prompt is denied with the reason.
      step.writes.push(
        event.subtype === 'can_use_tool'
          ? denyOversized(event)
          : refuseControlRequest({
              kind: 'control_request_other',
              requestId: event.requestId,
              subtype: event.subtype,
            }),
      );
      return;
    }
    case 'control_response': {
      const answered = controlAnswered(s, event);
      if (!answered) return;
      const control = answered.control;
      if (control.kind === 'initialize') {
        // Prompts the CLI still has open that this side lost (a crashed bridge) are offered again.
        for (const lost of recoverablePrompts(s, event.response)) applyEvent(session, lost, now, step);
        return;
      }
      step.frames.push(...answered.frames);
      if (event.ok && control.kind !== 'interrupt') {
        delete s.reported;
        step.frames.push(...session.status(session.agentState()));
      }
      return;
    }
    case 'conversation_reset': {
      delete s.sessionId;
      return;
    }
    case 'compacted':
      return;
    case 'usage_limit': {
      if (!session.waitOutLimit) {
        step.frames.push({
          type: 'operator_event',
          kind: 'rate_limit',
          message: 'usage limit reached',
          ...(s.turn ? { turnId: s.turn.id, route: s.turn.route } : {}),
          ...(event.resetsAt !== undefined ? { retryAfterMs: Math.max(0, event.resetsAt - now) } : {}),
        });
        return;
      }
      enterLimit(session, step, now, event.resetsAt, event.limitType);
      return;
    }
    case 'api_error': {
      const retryAfterMs = event.retryAfterMs;
      step.frames.push({
        type: 'operator_event',
        kind: event.category,
        message: safeSlice(event.message, 0, 4000),
        ...(s.turn ? { turnId: s.turn.id, route: s.turn.route } : {}),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
      return;
    }
    // Read-receipts matter only to the bridge's delivery bookkeeping, not to what a user sees.
    case 'input_queued':
    case 'skipped':
      return;
    default: {
      assertNever(event);
    }
  }
}

/**
 * Books the CLI's cumulative cost of this process (`total_cost_usd` on `result`): returns what this
 * turn cost and adds it to the conversation's total. The CLI's figure covers the process, not the turn,
 * and starts again at zero in a resumed process.
 */
function chargeCost(s: SessionState, total: number | undefined): number | undefined {
  if (total === undefined) return undefined;
  const cost = Math.max(0, total - (s.processCostUsd ?? 0));
  s.processCostUsd = total;
  s.costUsd = (s.costUsd ?? 0) + cost;
  return cost;
}

function endTurn(
  session: SessionOps,
  event: Extract<CliEvent, { kind: 'result' }>,
  step: Step,
  now: number,
): void {
  const s = session.state;
  const turn = s.turn;
  if (!turn) {
    step.frames.push(...session.status(session.agentState()));
    return;
  }
  const ok = event.subtype === 'success' && !event.isError;
  const cost = chargeCost(s, event.costUsd);
  if (event.usageLimited === true && session.waitOutLimit && turn.commandId === undefined) {
    holdForReset(session, turn, step, now);
    return;
  }
  if (turn.commandId !== undefined) {
    step.frames.push({
      type: 'command_result',
      commandId: turn.commandId,
      ok,
      ...(ok ? {} : { message: safeSlice(event.text ?? event.subtype, 0, 4000) }),
      // `/compact` runs the model: the daily budgets count it as they count a turn.
      ...(cost !== undefined ? { costUsd: cost } : {}),
    });
  } else {
    const outcome = turn.interruptRequested ? 'interrupted' : ok ? 'success' : 'error';
    step.frames.push({
      type: 'turn_ended',
      turnId: turn.id,
      outcome,
      ...(outcome === 'error' ? { error: safeSlice(failureWords(event), 0, 4000) } : {}),
      ...(event.usage ? { usage: event.usage } : {}),
      ...(cost !== undefined ? { costUsd: cost, sessionCostUsd: s.costUsd ?? cost } : {}),
      ...(event.durationMs !== undefined ? { durationMs: event.durationMs } : {}),
    });
  }
  delete s.turn;
  s.compacting = false;
  // Messages no model call of this turn read (written during its last call, before an interrupt, or
  // while a command ran) are the CLI's next turn: open it now, announced as taken (module comment).
  // So are those this turn was opened for and the CLI has not echoed, when it echoed another: it reads
  // its queue one turn at a time when a message came during the turn's call. A turn that echoed nothing
  // (its call failed first) proves nothing about its queue: its unread messages are not carried on.
  const carried = turn.read === true ? (turn.unread ?? []) : [];
  const next = [...carried, ...s.awaiting.filter((id) => !carried.includes(id))];
  if (next.length > 0) {
    const request =
      carried.length > 0
        ? safeSlice(s.untaken?.find((m) => m.inboundId === carried[0])?.text ?? '', 0, 4096)
        : (s.awaitingRequest ?? '');
    // The chat the waiting messages came from (the last one's, as `acceptUserMessage` keeps it).
    const opened = session.openTurn(s.lastRoute ?? turn.route);
    opened.unread = [...next];
    step.frames.push(
      {
        type: 'turn_started',
        turnId: opened.id,
        route: opened.route,
        inboundIds: next,
        request,
        startedAt: now,
      },
      { type: 'message_taken', turnId: opened.id, inboundIds: [...next] },
    );
    session.clearAwaiting();
  }
  step.frames.push(...session.status(session.agentState()));
}

/**
 * Why a turn failed, in words for the person in the chat. An API failure gets a sentence of its own: the
 * CLI's text for it names the API host and is meant for an operator (who gets it as an operator event).
 */
function failureWords(event: Extract<CliEvent, { kind: 'result' }>): string {
  const status = event.apiErrorStatus;
  if (status === undefined) return event.text || `The turn failed (${event.subtype}).`;
  switch (classifyApiError(status, event.text ?? '')) {
    case 'overloaded':
      return `Claude is overloaded right now (API ${status}) and the retries ran out. Try again in a moment.`;
    case 'rate_limit':
      return `Claude's rate limit was reached (API ${status}) and the retries ran out. Try again later.`;
    case 'auth':
      return `Claude's API refused this agent's credentials (API ${status}). The operator needs to log it in again.`;
    default:
      return `Claude's API failed (API ${status}). Try again in a moment.`;
  }
}
