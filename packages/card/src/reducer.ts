/**
 * The reducer: `(state, event) → state`, pure and total. It never throws and never trusts order:
 *
 * - tool results pair with their call by id (parallel calls in one message finish in any order);
 * - a finish that arrives before its start is remembered and applied when the start comes;
 * - a duplicate start, a second end, or a main-agent event after the end leaves the state as it was
 *   (the same object, so callers can tell nothing changed);
 * - sub-agent events still apply after the turn ended, because sub-agents outlive their turn.
 */
import { cutText, oneLine } from './cut.js';
import type {
  CardEvent,
  PermissionWaitingEvent,
  SubagentStartedEvent,
  SubagentToolFinishedEvent,
  SubagentToolStartedEvent,
  ToolFinishedEvent,
  ToolStartedEvent,
  TurnEndedEvent,
} from './event.js';
import { toolLabel } from './label.js';
import {
  type CardState,
  EARLY_CAP,
  type EarlyFinish,
  isEnded,
  STEP_CAP,
  type StepRow,
  type StopReason,
  SUBAGENT_CAP,
  type SubagentRow,
  TEXT_KEEP,
} from './state.js';

/** Longest sub-agent description or text line kept. */
const SUBAGENT_TEXT_KEEP = 200;

/** Applies one event. Returns `state` itself when the event changes nothing. */
export function reduce(state: CardState, event: CardEvent): CardState {
  const at = Number.isFinite(event.at) ? event.at : state.lastEventAt;
  const next = apply(state, event, at);
  if (next === state) return state;
  return { ...next, lastEventAt: Math.max(state.lastEventAt, at), eventCount: state.eventCount + 1 };
}

function apply(state: CardState, event: CardEvent, at: number): CardState {
  switch (event.type) {
    case 'turn_started':
      if (state.started) return state;
      return {
        ...state,
        started: true,
        request: keepLine(event.request, TEXT_KEEP),
        startedAt: state.eventCount === 0 ? at : Math.min(state.startedAt, at),
      };
    case 'thinking': {
      if (isEnded(state)) return state;
      const thought = event.text === undefined ? '' : keepLine(event.text, TEXT_KEEP);
      if (state.thinking && (thought === '' || thought === state.thought)) return state;
      const { thought: _old, ...rest } = state;
      return { ...rest, thinking: true, ...(thought === '' ? {} : { thought }) };
    }
    case 'text': {
      const narration = keepLine(event.text, TEXT_KEEP);
      if (isEnded(state) || narration === '') return state;
      const { thought: _gone, ...rest } = state;
      return { ...rest, narration, thinking: false };
    }
    case 'tool_started':
      return isEnded(state) ? state : startTool(state, event, at);
    case 'tool_finished':
      return isEnded(state) ? state : finishTool(state, event, at);
    case 'subagent_started':
      return startSubagent(state, event, at);
    case 'subagent_tool_started':
      return startSubagentTool(state, event, at);
    case 'subagent_tool_finished':
      return finishSubagentTool(state, event, at);
    case 'subagent_text': {
      const text = keepLine(event.text, SUBAGENT_TEXT_KEEP);
      if (text === '') return state;
      return updateSubagent(state, event.agentId, at, (row) => ({ ...row, lastText: text }));
    }
    case 'subagent_finished':
      return updateSubagent(state, event.agentId, at, (row) => ({
        ...row,
        status: event.outcome,
        endedAt: at,
        running: [],
      }));
    case 'permission_waiting':
      return isEnded(state) ? state : addPrompt(state, event);
    case 'permission_answered': {
      const prompts = state.prompts.filter((p) => p.requestId !== event.requestId);
      return prompts.length === state.prompts.length ? state : { ...state, prompts };
    }
    case 'turn_ended':
      return state.outcome !== undefined ? state : endTurn(state, event, at);
  }
}

/**
 * Closes a card whose turn never ended: silence past the zombie ceiling (`idle`) or a newer turn in the
 * same chat (`superseded`). Running steps become abandoned; running sub-agents stay as they are.
 */
export function closeCard(state: CardState, at: number, reason: StopReason): CardState {
  if (isEnded(state)) return state;
  return {
    ...settle(state, at),
    stopReason: reason,
    endedAt: Math.max(state.startedAt, at),
  };
}

/**
 * Gives up on the sub-agents of an ended turn that have been silent since `silentSince` or before (their
 * end was lost: a restart, a crash): they show as `abandoned`, and no card stays open or pinned for them.
 * A turn still running keeps its sub-agents; the zombie ceiling covers it.
 */
export function abandonSilentSubagents(state: CardState, silentSince: number, at: number): CardState {
  if (!isEnded(state)) return state;
  const silent = (row: SubagentRow) => row.status === 'running' && row.lastEventAt <= silentSince;
  if (!state.subagents.some(silent)) return state;
  return {
    ...state,
    subagents: state.subagents.map((row) =>
      silent(row) ? { ...row, status: 'abandoned', endedAt: Math.max(row.startedAt, at), running: [] } : row,
    ),
  };
}

/**
 * Hands the sub-agents still running on `from` to `to` (the next card of the same chat): they show as
 * `moved` on the old card and carry on, with their counts, on the new one.
 */
export function handOver(from: CardState, to: CardState): { from: CardState; to: CardState } {
  const moving = from.subagents.filter((row) => row.status === 'running');
  if (moving.length === 0) return { from, to };
  const known = new Set(to.subagents.map((row) => row.id));
  const room = Math.max(0, SUBAGENT_CAP - to.subagents.length);
  const added = moving.filter((row) => !known.has(row.id)).slice(0, room);
  return {
    from: {
      ...from,
      subagents: from.subagents.map((row) => (row.status === 'running' ? { ...row, status: 'moved' } : row)),
    },
    to: added.length === 0 ? to : { ...to, subagents: [...to.subagents, ...added] },
  };
}

function keepLine(text: string, max: number): string {
  return cutText(oneLine(text), max);
}

function keepError(text: string | undefined): { errorText?: string } {
  if (text === undefined) return {};
  const line = keepLine(text, TEXT_KEEP);
  return line === '' ? {} : { errorText: line };
}

function startTool(state: CardState, event: ToolStartedEvent, at: number): CardState {
  if (indexById(state.steps, event.toolUseId) >= 0) return state;
  const base = {
    id: event.toolUseId,
    name: event.name,
    label: toolLabel(event.name, event.input ?? {}),
    startedAt: at,
  };
  const early = state.early[event.toolUseId];
  const step: StepRow =
    early === undefined
      ? { ...base, status: 'running' }
      : {
          ...base,
          status: early.isError ? 'error' : 'ok',
          endedAt: Math.max(at, early.at),
          ...(early.errorText === undefined ? {} : { errorText: early.errorText }),
        };
  const { thought: _gone, ...rest } = state;
  return trimSteps({
    ...rest,
    steps: [...state.steps, step],
    early: early === undefined ? state.early : forget(state.early, event.toolUseId),
    thinking: false,
  });
}

function finishTool(state: CardState, event: ToolFinishedEvent, at: number): CardState {
  const index = indexById(state.steps, event.toolUseId);
  if (index < 0) return rememberEarly(state, event.toolUseId, event.isError, event.errorText, at);
  const step = state.steps[index];
  if (step === undefined || step.status !== 'running') return state;
  const done: StepRow = {
    ...step,
    status: event.isError ? 'error' : 'ok',
    endedAt: Math.max(at, step.startedAt),
    ...(event.isError ? keepError(event.errorText) : {}),
  };
  return trimSteps({ ...state, steps: replaceAt(state.steps, index, done) });
}

function startSubagent(state: CardState, event: SubagentStartedEvent, at: number): CardState {
  const index = indexById(state.subagents, event.agentId);
  const agentType = keepLine(event.agentType, 60) || 'agent';
  const description =
    keepLine(event.description, SUBAGENT_TEXT_KEEP) || keepLine(event.prompt, SUBAGENT_TEXT_KEEP);
  if (index >= 0) {
    // A row made up from an earlier tool event learns its name; a true duplicate changes nothing.
    const row = state.subagents[index];
    if (row === undefined || row.description !== '' || description === '') return state;
    return { ...state, subagents: replaceAt(state.subagents, index, { ...row, agentType, description }) };
  }
  if (state.subagents.length >= SUBAGENT_CAP)
    return { ...state, droppedSubagents: state.droppedSubagents + 1 };
  const parentId =
    event.parentAgentId ?? state.subagents.find((row) => row.running.some((t) => t.id === event.agentId))?.id;
  const row: SubagentRow = {
    ...newSubagent(event.agentId, at),
    agentType,
    description,
    ...(parentId === undefined || parentId === event.agentId ? {} : { parentId }),
  };
  return { ...state, subagents: [...state.subagents, row] };
}

function newSubagent(id: string, at: number): SubagentRow {
  return {
    id,
    agentType: 'agent',
    description: '',
    status: 'running',
    startedAt: at,
    lastEventAt: at,
    toolCount: 0,
    errorCount: 0,
    running: [],
  };
}

function startSubagentTool(state: CardState, event: SubagentToolStartedEvent, at: number): CardState {
  const early = state.early[event.toolUseId];
  const next = updateSubagent(state, event.agentId, at, (row) => {
    if (row.running.some((t) => t.id === event.toolUseId)) return row;
    const counted = { ...row, toolCount: row.toolCount + 1 };
    if (early !== undefined) return { ...counted, errorCount: row.errorCount + (early.isError ? 1 : 0) };
    const tool = {
      id: event.toolUseId,
      name: event.name,
      label: toolLabel(event.name, event.input ?? {}),
      startedAt: at,
    };
    return { ...counted, running: [...row.running, tool] };
  });
  return early === undefined || next === state
    ? next
    : { ...next, early: forget(next.early, event.toolUseId) };
}

function finishSubagentTool(state: CardState, event: SubagentToolFinishedEvent, at: number): CardState {
  const row = state.subagents[indexById(state.subagents, event.agentId)];
  if (row === undefined || !row.running.some((t) => t.id === event.toolUseId)) {
    if (row !== undefined && row.status !== 'running') return state;
    return rememberEarly(state, event.toolUseId, event.isError, event.errorText, at);
  }
  return updateSubagent(state, event.agentId, at, (r) => ({
    ...r,
    running: r.running.filter((t) => t.id !== event.toolUseId),
    errorCount: r.errorCount + (event.isError ? 1 : 0),
  }));
}

/**
 * Applies `change` to a running sub-agent's row, creating the row when the agent is unknown (its start
 * was lost or comes later). Rows that finished or moved are left alone: a late or duplicate event for
 * them changes nothing.
 */
function updateSubagent(
  state: CardState,
  agentId: string,
  at: number,
  change: (row: SubagentRow) => SubagentRow,
): CardState {
  const index = indexById(state.subagents, agentId);
  const row = state.subagents[index];
  if (row === undefined) {
    if (state.subagents.length >= SUBAGENT_CAP) return state;
    const created = change(newSubagent(agentId, at));
    return { ...state, subagents: [...state.subagents, { ...created, lastEventAt: at }] };
  }
  if (row.status !== 'running') return state;
  const changed = change(row);
  if (changed === row) return state;
  return { ...state, subagents: replaceAt(state.subagents, index, { ...changed, lastEventAt: at }) };
}

function addPrompt(state: CardState, event: PermissionWaitingEvent): CardState {
  if (state.prompts.some((p) => p.requestId === event.requestId)) return state;
  const toolName = event.toolName === undefined ? undefined : keepLine(event.toolName, 60);
  const summary = event.summary === undefined ? undefined : keepLine(event.summary, SUBAGENT_TEXT_KEEP);
  return {
    ...state,
    prompts: [
      ...state.prompts,
      {
        requestId: event.requestId,
        ...(toolName ? { toolName } : {}),
        ...(summary ? { summary } : {}),
      },
    ],
  };
}

function endTurn(state: CardState, event: TurnEndedEvent, at: number): CardState {
  const error = event.error === undefined ? '' : keepLine(event.error, TEXT_KEEP);
  const { stopReason: _dropped, ...rest } = settle(state, at);
  return {
    ...rest,
    outcome: event.outcome,
    endedAt: Math.max(state.startedAt, at),
    ...(error === '' ? {} : { error }),
    ...(event.usage === undefined ? {} : { usage: event.usage }),
    ...(event.costUsd === undefined || !Number.isFinite(event.costUsd) ? {} : { costUsd: event.costUsd }),
  };
}

/** The main agent stops: running steps are abandoned, prompts and thinking cleared. */
function settle(state: CardState, at: number): CardState {
  const steps = state.steps.some((s) => s.status === 'running')
    ? state.steps.map(
        (s): StepRow => (s.status === 'running' ? { ...s, status: 'abandoned', endedAt: at } : s),
      )
    : state.steps;
  const { thought: _gone, ...rest } = state;
  return { ...rest, steps, prompts: [], thinking: false };
}

function rememberEarly(
  state: CardState,
  id: string,
  isError: boolean,
  errorText: string | undefined,
  at: number,
): CardState {
  if (Object.hasOwn(state.early, id)) return state;
  const entry: EarlyFinish = { isError, at, ...(isError ? keepError(errorText) : {}) };
  const keys = Object.keys(state.early);
  const kept = keys.length >= EARLY_CAP ? forget(state.early, keys[0] ?? '') : state.early;
  return { ...state, early: { ...kept, [id]: entry } };
}

function forget(
  early: Readonly<Record<string, EarlyFinish>>,
  id: string,
): Readonly<Record<string, EarlyFinish>> {
  const { [id]: _gone, ...rest } = early;
  return rest;
}

/** Keeps at most {@link STEP_CAP} finished steps, dropping (and counting) the oldest. */
function trimSteps(state: CardState): CardState {
  let finished = 0;
  for (const step of state.steps) if (step.status !== 'running') finished += 1;
  if (finished <= STEP_CAP) return state;
  let excess = finished - STEP_CAP;
  const steps = state.steps.filter((step) => {
    if (excess > 0 && step.status !== 'running') {
      excess -= 1;
      return false;
    }
    return true;
  });
  return { ...state, steps, droppedSteps: state.droppedSteps + (finished - STEP_CAP) };
}

/** Index of the row with `id`, searched newest first (results mostly answer recent calls); -1 if none. */
function indexById(rows: readonly { readonly id: string }[], id: string): number {
  return rows.findLastIndex((row) => row.id === id);
}

function replaceAt<T>(items: readonly T[], index: number, item: T): readonly T[] {
  const copy = items.slice();
  copy[index] = item;
  return copy;
}
