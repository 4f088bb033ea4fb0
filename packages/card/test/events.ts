/**
 * Event builders for the card's tests: short to write, with a default time so a test states only what
 * it is about. Not a test file itself (vitest collects `*.test.ts` only).
 */
import type { CardEvent } from '../src/index.js';

export const ev = {
  start: (at: number, request = 'fix the build'): CardEvent => ({ type: 'turn_started', at, request }),
  thinking: (at: number): CardEvent => ({ type: 'thinking', at }),
  text: (at: number, text: string): CardEvent => ({ type: 'text', at, text }),
  tool: (at: number, toolUseId: string, name = 'Read', input: Record<string, unknown> = {}): CardEvent => ({
    type: 'tool_started',
    at,
    toolUseId,
    name,
    input,
  }),
  done: (at: number, toolUseId: string, errorText?: string): CardEvent => ({
    type: 'tool_finished',
    at,
    toolUseId,
    isError: errorText !== undefined,
    errorText,
  }),
  agent: (at: number, agentId: string, description = 'look around', agentType = 'Explore'): CardEvent => ({
    type: 'subagent_started',
    at,
    agentId,
    agentType,
    description,
    prompt: 'please look around',
  }),
  agentTool: (
    at: number,
    agentId: string,
    toolUseId: string,
    name = 'Grep',
    input: Record<string, unknown> = {},
  ) => ({ type: 'subagent_tool_started', at, agentId, toolUseId, name, input }) as const satisfies CardEvent,
  agentToolDone: (at: number, agentId: string, toolUseId: string, isError = false): CardEvent => ({
    type: 'subagent_tool_finished',
    at,
    agentId,
    toolUseId,
    isError,
  }),
  agentEnd: (
    at: number,
    agentId: string,
    outcome: 'success' | 'error' | 'killed' = 'success',
  ): CardEvent => ({
    type: 'subagent_finished',
    at,
    agentId,
    outcome,
  }),
  ask: (at: number, requestId: string, toolName = 'Bash', summary = 'rm -rf build'): CardEvent => ({
    type: 'permission_waiting',
    at,
    requestId,
    toolName,
    summary,
  }),
  answered: (at: number, requestId: string): CardEvent => ({ type: 'permission_answered', at, requestId }),
  end: (at: number, outcome: 'success' | 'error' | 'interrupted' = 'success', error?: string): CardEvent => ({
    type: 'turn_ended',
    at,
    outcome,
    error,
    usage: { inputTokens: 12_345, outputTokens: 678 },
    costUsd: 0.0421,
  }),
};
