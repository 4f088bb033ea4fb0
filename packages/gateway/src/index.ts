/**
 * `@switchyard/gateway`: the long-lived Telegram side of an agent — durable intake, placeholders,
 * streamed replies, the pinned progress card, inline keyboards and commands — listening on a Unix socket
 * for the agent's bridge.
 *
 * @packageDocumentation
 */

export { REFUSAL } from './access.js';
export { cronProblem, timezoneProblem } from './automation/cron.js';
/** Send pacing knobs (`GatewayOptions.budget`). */
export type { AutomationRun, Injector } from './automation/inject.js';
export type { ConfiguredSchedule, ScheduleOptions } from './automation/schedule-options.js';
/** The local day of a time zone, as the daily budgets count it (`GatewayOptions.spend`). */
export { type LocalDay, localDay } from './budget/local-day.js';
export type { SpendOptions } from './budget/spend-ledger.js';
export type { BudgetOptions } from './budget.js';
/** Progress-card timing (`GatewayOptions.card`). */
export type { CardOptions } from './card-driver.js';
/** The command table registered with Telegram. */
export { formatUsd } from './core/command-texts.js';
export { COMMANDS } from './core/commands.js';
/** Texts the user sees for placeholders and refusals, for tests and docs. */
export { PLACEHOLDER } from './core/marker-text.js';
/** The factory, its options, its handle and its status snapshot. */
export { createGateway, type Gateway } from './gateway.js';
/** Markdown → Telegram HTML, for callers that render replies the same way. */
export { type HtmlChunk, renderMarkdown, splitPlain, TELEGRAM_TEXT_LIMIT } from './markdown.js';
/** Prometheus metrics (off by default): the endpoint the cli starts and the interface the gateway calls. */
export {
  createMetrics,
  type GatewayMetrics,
  type MetricsOptions,
  type MetricsServer,
  noMetrics,
} from './metrics.js';
export type { GatewayOptions, GatewayStatus } from './options.js';
export { EXPIRED } from './prompts.js';
/** Read-only inspection, integrity check and online backup of a gateway's SQLite file, for operator tools. */
export {
  backupGatewayStore,
  checkGatewayStore,
  type GatewayInspection,
  type GatewaySpend,
  inspectGatewayStore,
  readGatewaySpend,
} from './store/inspect.js';
/** The SQLite store, for operator tools that inspect a gateway's state. */
export { type GatewayStore, openGatewayStore } from './store.js';
/** Speech to text for voice notes (`GatewayOptions.voice`): the backends' options and the outcomes. */
export {
  type CommandVoiceOptions,
  createTranscriber,
  DEFAULT_VOICE_MAX_SECONDS,
  DEFAULT_VOICE_TIMEOUT_MS,
  type HttpVoiceOptions,
  type Transcriber,
  type Transcription,
  type VoiceFile,
  type VoiceOptions,
} from './voice/transcriber.js';
/** The webhook receiver's options (`GatewayOptions.webhooks`) and the signature senders compute. */
export { signBody } from './webhooks/signature.js';
export type { WebhookHookOptions, WebhookOptions } from './webhooks/webhook-options.js';
