/**
 * The card's state: everything the renderer needs about one turn, and nothing Telegram-specific.
 * Immutable: the reducer returns a new object for every change and shares what did not change.
 *
 * Bounded on purpose, so a runaway turn cannot grow the gateway's memory or the cost of a render:
 * finished main-agent steps beyond {@link STEP_CAP} are counted in `droppedSteps` instead of kept,
 * sub-agent rows beyond {@link SUBAGENT_CAP} are refused (counted in `droppedSubagents`), and every text
 * kept is cut to a line.
 */
import type { CardUsage, SubagentOutcome, TurnOutcome } from './event.js';

/** Finished steps kept per card; older ones only count. The renderer never has room for more. */
export const STEP_CAP = 200;
/** Sub-agent rows kept per card. */
export const SUBAGENT_CAP = 64;
/** Tool finishes remembered when they arrive before their start. */
export const EARLY_CAP = 64;
/** Longest narration, request or error text kept. */
export const TEXT_KEEP = 600;

/** Where the turn is, as the header shows it. `stopped`: the card gave up on a turn that never ended. */
export type Stage = 'working' | 'waiting' | 'done' | 'failed' | 'interrupted' | 'stopped';

/** Why a card was closed without its turn ending: silence past the zombie ceiling, or a newer turn. */
export type StopReason = 'idle' | 'superseded';

/** A main-agent tool call. `abandoned`: the turn ended while it was still running. */
export interface StepRow {
  readonly id: string;
  readonly name: string;
  readonly label: string;
  readonly startedAt: number;
  readonly endedAt?: number;
  readonly status: 'running' | 'ok' | 'error' | 'abandoned';
  readonly errorText?: string;
}

/** A tool a sub-agent is running. */
export interface RunningTool {
  readonly id: string;
  readonly name: string;
  readonly label: string;
  readonly startedAt: number;
}

/**
 * One sub-agent. `moved`: handed to the next card of the same chat when a new turn began. `abandoned`: it
 * outlived its turn and then went silent past the zombie ceiling, so no card waits for it any longer.
 */
export interface SubagentRow {
  readonly id: string;
  readonly parentId?: string;
  readonly agentType: string;
  readonly description: string;
  readonly status: 'running' | 'moved' | 'abandoned' | SubagentOutcome;
  readonly startedAt: number;
  readonly endedAt?: number;
  readonly lastEventAt: number;
  /** Tool calls started so far, and how many of them failed. */
  readonly toolCount: number;
  readonly errorCount: number;
  readonly running: readonly RunningTool[];
  readonly lastText?: string;
}

/** A prompt the turn is waiting on. */
export interface PendingPrompt {
  readonly requestId: string;
  readonly toolName?: string;
  readonly summary?: string;
}

/** A tool finish seen before its start, kept until the start arrives. */
export interface EarlyFinish {
  readonly isError: boolean;
  readonly errorText?: string;
  readonly at: number;
}

/** The state of one card. Create it with {@link initialCardState}; change it only with the reducer. */
export interface CardState {
  readonly request: string;
  /** Whether `turn_started` was seen; a card may begin from a later event after a gateway restart. */
  readonly started: boolean;
  readonly startedAt: number;
  /** The latest event's time: the stuck warning and the zombie ceiling count from here. */
  readonly lastEventAt: number;
  readonly endedAt?: number;
  readonly outcome?: TurnOutcome;
  readonly stopReason?: StopReason;
  readonly error?: string;
  readonly usage?: CardUsage;
  readonly costUsd?: number;
  /** Main-agent tool calls in start order (the newest {@link STEP_CAP} finished ones, plus running ones). */
  readonly steps: readonly StepRow[];
  readonly droppedSteps: number;
  readonly subagents: readonly SubagentRow[];
  readonly droppedSubagents: number;
  readonly prompts: readonly PendingPrompt[];
  /** True from a `thinking` event until the next text or tool. */
  readonly thinking: boolean;
  /** What the model thought, one line, while `thinking`; absent when the CLI gave no text. */
  readonly thought?: string;
  /** The main agent's latest text, one line. */
  readonly narration?: string;
  readonly early: Readonly<Record<string, EarlyFinish>>;
  /** How many events were applied; lets the cadence and tests see that something happened. */
  readonly eventCount: number;
}

/** An empty card for a turn that starts at `at`. */
export function initialCardState(at: number, request = ''): CardState {
  return {
    request,
    started: false,
    startedAt: at,
    lastEventAt: at,
    steps: [],
    droppedSteps: 0,
    subagents: [],
    droppedSubagents: 0,
    prompts: [],
    thinking: false,
    early: {},
    eventCount: 0,
  };
}

/** True when the turn is over: ended, or closed by the card. */
export function isEnded(state: CardState): boolean {
  return state.outcome !== undefined || state.stopReason !== undefined;
}

/** The number of sub-agents still running. */
export function runningSubagents(state: CardState): number {
  let n = 0;
  for (const row of state.subagents) if (row.status === 'running') n += 1;
  return n;
}

/** True while anything is running: the turn, or a sub-agent that outlives it. Drives the heartbeat. */
export function isActive(state: CardState): boolean {
  return !isEnded(state) || runningSubagents(state) > 0;
}

/** The stage the header shows. */
export function stageOf(state: CardState): Stage {
  if (state.outcome === 'success') return 'done';
  if (state.outcome === 'error') return 'failed';
  if (state.outcome === 'interrupted') return 'interrupted';
  if (state.stopReason !== undefined) return 'stopped';
  return state.prompts.length > 0 ? 'waiting' : 'working';
}
