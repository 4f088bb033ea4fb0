/**
 * Sub-agents, as part of the session machine: pure functions on {@link SessionState} (no I/O, no clock),
 * called by `Session`.
 *
 * Rules (measured on 2.1.328):
 * - A main-agent call of `Task` or `Agent` starts a sub-agent whose id is that tool-use id. Its own lines
 *   carry `parent_tool_use_id` = that id; they belong to the turn that launched it, even after that turn's
 *   `result`, and never open or steer a turn.
 * - A foreground sub-agent is done when its tool returns; a background one (`run_in_background`, or a
 *   `task_started` for it) only reports launching there, and is done at its `task_notification` — after
 *   which the CLI starts a turn by itself, which goes to the launching turn's chat (`selfRoute`).
 * - A sub-agent's permission prompt names only its own tool call; `subagentTools` maps that call to the
 *   sub-agent, so the prompt goes to the launching turn instead of opening a new main-agent turn.
 */
import { safeSlice } from '@switchyard/card';
import type { AppFrame, Route } from '@switchyard/protocol/common';
import type { SessionState } from '../session/state.js';
import { shortenInput } from '../translate/summary.js';
import type { CliEvent } from '../translate/translator.js';

/** Tool names whose calls start a sub-agent. `Task` until 2.1.x renamed it `Agent`; both are seen. */
const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);

/** A stdout line of a sub-agent's own that the gateway is shown. */
export type SubagentLine = Extract<CliEvent, { kind: 'text' | 'tool_use' | 'tool_result' }>;

/** The turn a line belongs to: its sub-agent's launching turn, else the running (or last) turn. */
export function turnIdFor(s: SessionState, parent: string | null): string {
  if (parent !== null) {
    const agent = s.agents[parent];
    if (agent) return agent.turnId;
  }
  return s.turn?.id ?? `g${s.generation}-t${s.turnCounter}`;
}

/** The frame for a line of the sub-agent `parent`; a tool call is remembered as the sub-agent's. */
export function subagentLineFrame(s: SessionState, event: SubagentLine, parent: string): AppFrame {
  const turnId = turnIdFor(s, parent);
  switch (event.kind) {
    case 'text':
      return { type: 'subagent_text', turnId, agentId: parent, text: event.text };
    case 'tool_use':
      if (s.agents[parent]) {
        s.subagentTools ??= {};
        s.subagentTools[event.id] = parent;
      }
      return {
        type: 'subagent_tool_started',
        turnId,
        agentId: parent,
        toolUseId: event.id,
        name: event.name,
        input: shortenInput(event.input),
      };
    case 'tool_result':
      if (s.subagentTools) delete s.subagentTools[event.toolUseId];
      return {
        type: 'subagent_tool_finished',
        turnId,
        agentId: parent,
        toolUseId: event.toolUseId,
        isError: event.isError,
        ...(event.errorText !== undefined ? { errorText: event.errorText } : {}),
      };
  }
}

/** A main-agent tool call in `turn`: if it launches a sub-agent, records it and returns its frame. */
export function startSubagent(
  s: SessionState,
  event: Extract<CliEvent, { kind: 'tool_use' }>,
  turn: { id: string; route: Route },
): AppFrame | undefined {
  if (!SUBAGENT_TOOLS.has(event.name)) return undefined;
  const input = event.input;
  s.agents[event.id] = {
    turnId: turn.id,
    route: turn.route,
    background: input.run_in_background === true,
    finished: false,
  };
  return {
    type: 'subagent_started',
    turnId: turn.id,
    agentId: event.id,
    agentType: safeSlice(String(input.subagent_type ?? 'general-purpose'), 0, 200),
    description: safeSlice(String(input.description ?? ''), 0, 4000),
    prompt: safeSlice(String(input.prompt ?? ''), 0, 20_000),
  };
}

/** A main-agent tool returned: a foreground sub-agent launched by it is done. */
export function toolReturned(s: SessionState, toolUseId: string, isError: boolean): AppFrame | undefined {
  const agent = s.agents[toolUseId];
  // A foreground agent is done when its tool returns; a background one only reports launching.
  if (!agent || agent.background || agent.finished) return undefined;
  agent.finished = true;
  return {
    type: 'subagent_finished',
    turnId: agent.turnId,
    agentId: toolUseId,
    outcome: isError ? 'error' : 'success',
  };
}

/** `task_started`: the sub-agent runs in the background. */
export function taskStarted(s: SessionState, toolUseId: string): void {
  const agent = s.agents[toolUseId];
  if (agent) agent.background = true;
}

/**
 * `task_notification`: a background sub-agent is done and forgotten; the turn the CLI starts next (with
 * the task's result as input) belongs to its chat.
 */
export function taskNotified(s: SessionState, toolUseId: string, status: string): AppFrame[] {
  const agent = s.agents[toolUseId];
  if (!agent) return [];
  s.selfRoute = agent.route;
  const frames: AppFrame[] = [];
  if (!agent.finished) {
    agent.finished = true;
    frames.push({
      type: 'subagent_finished',
      turnId: agent.turnId,
      agentId: toolUseId,
      outcome: status === 'completed' ? 'success' : status === 'stopped' ? 'killed' : 'error',
    });
  }
  delete s.agents[toolUseId];
  for (const [tool, owner] of Object.entries(s.subagentTools ?? {}))
    if (owner === toolUseId) delete s.subagentTools?.[tool];
  return frames;
}

/** The launching turn of the sub-agent that made the tool call `toolUseId`, if a sub-agent made it. */
export function subagentTurnOf(
  s: SessionState,
  toolUseId: string | undefined,
): { id: string; route: Route } | undefined {
  const parent = toolUseId !== undefined ? s.subagentTools?.[toolUseId] : undefined;
  const agent = parent !== undefined ? s.agents[parent] : undefined;
  return agent ? { id: agent.turnId, route: agent.route } : undefined;
}

/** The process is gone: every sub-agent not finished is reported killed, and all are forgotten. */
export function killSubagents(s: SessionState): AppFrame[] {
  const frames: AppFrame[] = [];
  for (const [agentId, agent] of Object.entries(s.agents)) {
    if (!agent.finished)
      frames.push({ type: 'subagent_finished', turnId: agent.turnId, agentId, outcome: 'killed' });
  }
  s.agents = {};
  delete s.subagentTools;
  return frames;
}
