/**
 * The card's input vocabulary: one discriminated union on `type`, shaped so the gateway can map the
 * protocol's turn frames onto it by adding a timestamp. Field names match the frames of
 * `@switchyard/protocol` on purpose (`{ ...frame, at }` is a valid event for the frames of the same name);
 * the card does not import the protocol, so it stays at the bottom of the dependency graph.
 *
 * `at` is Unix ms supplied by the caller. The card has no clock of its own.
 */

/** Token counts of a finished turn, as the protocol reports them. */
export interface CardUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens?: number | undefined;
  readonly cacheWriteTokens?: number | undefined;
}

/** How a turn ended. */
export type TurnOutcome = 'success' | 'error' | 'interrupted';

/** How a sub-agent ended; `killed` covers a sub-agent capped or cancelled mid-flight. */
export type SubagentOutcome = 'success' | 'error' | 'killed';

/** A turn began. `request` is the user's text (empty for a turn the CLI started by itself). */
export interface TurnStartedEvent {
  readonly type: 'turn_started';
  readonly at: number;
  readonly request: string;
}

/** The model is thinking; `text` (its thought, when the CLI gives it) is shown as one line while it lasts. */
export interface ThinkingEvent {
  readonly type: 'thinking';
  readonly at: number;
  readonly text?: string | undefined;
}

/** A consolidated text block of the main agent: narration before a tool, or the answer itself. */
export interface TextEvent {
  readonly type: 'text';
  readonly at: number;
  readonly text: string;
}

/** The main agent called a tool. `input` may have long strings cut by the bridge. */
export interface ToolStartedEvent {
  readonly type: 'tool_started';
  readonly at: number;
  readonly toolUseId: string;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** A main-agent tool returned. Paired with its start by `toolUseId`, never by order. */
export interface ToolFinishedEvent {
  readonly type: 'tool_finished';
  readonly at: number;
  readonly toolUseId: string;
  readonly isError: boolean;
  readonly errorText?: string | undefined;
}

/**
 * A sub-agent started. `agentId` is the tool-use id of the Task/Agent call that spawned it. A nested
 * spawn is recognised by that id being a running tool of another sub-agent, or named in `parentAgentId`.
 */
export interface SubagentStartedEvent {
  readonly type: 'subagent_started';
  readonly at: number;
  readonly agentId: string;
  readonly agentType: string;
  readonly description: string;
  readonly prompt: string;
  readonly parentAgentId?: string | undefined;
}

/** A sub-agent called a tool. */
export interface SubagentToolStartedEvent {
  readonly type: 'subagent_tool_started';
  readonly at: number;
  readonly agentId: string;
  readonly toolUseId: string;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** A sub-agent's tool returned. */
export interface SubagentToolFinishedEvent {
  readonly type: 'subagent_tool_finished';
  readonly at: number;
  readonly agentId: string;
  readonly toolUseId: string;
  readonly isError: boolean;
  readonly errorText?: string | undefined;
}

/** A sub-agent produced text. */
export interface SubagentTextEvent {
  readonly type: 'subagent_text';
  readonly at: number;
  readonly agentId: string;
  readonly text: string;
}

/** A sub-agent ended, possibly after its parent turn did. */
export interface SubagentFinishedEvent {
  readonly type: 'subagent_finished';
  readonly at: number;
  readonly agentId: string;
  readonly outcome: SubagentOutcome;
}

/**
 * The turn waits for the user: a permission prompt (`toolName` and a one-line `summary`) or a question
 * (`toolName` absent). Maps from the protocol's `permission_request` and `question` frames.
 */
export interface PermissionWaitingEvent {
  readonly type: 'permission_waiting';
  readonly at: number;
  readonly requestId: string;
  readonly toolName?: string | undefined;
  readonly summary?: string | undefined;
}

/** A prompt was answered, cancelled or expired. Maps from the protocol's `prompt_closed` frame. */
export interface PermissionAnsweredEvent {
  readonly type: 'permission_answered';
  readonly at: number;
  readonly requestId: string;
}

/** The turn ended. Sub-agents still running keep their rows (they outlive their turn). */
export interface TurnEndedEvent {
  readonly type: 'turn_ended';
  readonly at: number;
  readonly outcome: TurnOutcome;
  readonly error?: string | undefined;
  readonly usage?: CardUsage | undefined;
  readonly costUsd?: number | undefined;
  readonly durationMs?: number | undefined;
}

/** Everything the card reacts to. Switch on `type`. */
export type CardEvent =
  | TurnStartedEvent
  | ThinkingEvent
  | TextEvent
  | ToolStartedEvent
  | ToolFinishedEvent
  | SubagentStartedEvent
  | SubagentToolStartedEvent
  | SubagentToolFinishedEvent
  | SubagentTextEvent
  | SubagentFinishedEvent
  | PermissionWaitingEvent
  | PermissionAnsweredEvent
  | TurnEndedEvent;

/** The tag of a {@link CardEvent}. */
export type CardEventType = CardEvent['type'];

/** The events about one sub-agent: the cadence routes them by `agentId`, since they may outlive their turn. */
export type SubagentEvent = Extract<CardEvent, { agentId: string }>;

/** True for events that concern a sub-agent rather than the main agent. */
export function isSubagentEvent(event: CardEvent): event is SubagentEvent {
  return 'agentId' in event;
}
