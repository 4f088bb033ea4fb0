/**
 * `@switchyard/card`: the progress card a user watches while an agent works — pure, with no I/O, no
 * timers and no Telegram or Node imports. Three parts, usable on their own:
 *
 * - {@link reduce}: `(state, event) → state`, total and order-tolerant;
 * - {@link render}: `(state, now) → Telegram HTML`, always valid and below the message limit;
 * - {@link createCadence}: the state machine that says when to send, edit, pin, unpin and close cards,
 *   driven by events, ticks and action reports, each stamped with the caller's clock.
 *
 * The gateway maps protocol frames to {@link CardEvent}s (same field names, plus `at`), feeds them to
 * the cadence, performs the returned actions and reports their outcomes.
 *
 * @packageDocumentation
 */

/** The cadence's types: options, actions, their results, and what each input returns. */
export type {
  ActionResult,
  AdoptedCard,
  Cadence,
  CadenceOptions,
  CadenceStep,
  CardAction,
  CardView,
} from './cadence.js';
/** Creating the cadence, and its default timings. */
export { CADENCE_DEFAULTS, createCadence } from './cadence.js';
/** Cutting untrusted text on whole characters; {@link visibleText} for text a person decides on. */
export { cutEnd, cutMiddle, cutPath, cutText, oneLine, safeSlice, visibleText } from './cut.js';
/** The card's input events; see each member's documentation. */
export type {
  CardEvent,
  CardEventType,
  CardUsage,
  PermissionAnsweredEvent,
  PermissionWaitingEvent,
  SubagentEvent,
  SubagentFinishedEvent,
  SubagentOutcome,
  SubagentStartedEvent,
  SubagentTextEvent,
  SubagentToolFinishedEvent,
  SubagentToolStartedEvent,
  TextEvent,
  ThinkingEvent,
  ToolFinishedEvent,
  ToolStartedEvent,
  TurnEndedEvent,
  TurnOutcome,
  TurnStartedEvent,
} from './event.js';
/** Tells sub-agent events (routed by `agentId`) from main-agent ones. */
export { isSubagentEvent } from './event.js';
/** HTML escaping, and the tags Telegram's HTML parse mode accepts. */
export { escapeHtml, RICH_MARKDOWN_TAGS, TELEGRAM_TAGS } from './html.js';
/** Tool-call labels ("Read …/src/app.ts", "Bash: run the tests") and group summaries ("Read 12 files"). */
export { LABEL_MAX, toolDetail, toolGroupSummary, toolLabel, urlHost } from './label.js';
/** The reducer, and the two transitions the cadence makes on its own (closing, handing over sub-agents). */
export { abandonSilentSubagents, closeCard, handOver, reduce } from './reducer.js';
/** The renderer and its options. */
export type { RenderOptions } from './render.js';
/** Rendering a state to Telegram HTML; its limit and default stuck threshold; the duration format. */
export { DEFAULT_STUCK_AFTER_MS, formatDuration, MESSAGE_LIMIT, render } from './render.js';
/** The card's state and its read-only queries. */
export type {
  CardState,
  EarlyFinish,
  PendingPrompt,
  RunningTool,
  Stage,
  StepRow,
  StopReason,
  SubagentRow,
} from './state.js';
/** Creating a state, asking it where the turn is, and the bounds that keep it small. */
export {
  initialCardState,
  isActive,
  isEnded,
  runningSubagents,
  STEP_CAP,
  SUBAGENT_CAP,
  stageOf,
} from './state.js';
