/**
 * `@switchyard/gateway`: the long-lived Telegram side of an agent — durable intake, placeholders,
 * streamed replies, the pinned progress card, inline keyboards and commands — listening on a Unix socket
 * for the agent's bridge.
 *
 * @packageDocumentation
 */

/** The command table registered with Telegram. */
export { formatUsd } from './core/commands/command-texts.js';
export { COMMANDS } from './core/commands/commands.js';
export { REFUSAL } from './core/intake/access.js';
export type { BudgetOptions } from './core/telegram/send-pacing.js';
/** Markdown → Telegram HTML, for callers that render replies the same way. */
export { type HtmlChunk, renderMarkdown, splitPlain, TELEGRAM_TEXT_LIMIT } from './core/text/markdown.js';
/** Texts the user sees for placeholders and refusals, for tests and docs. */
export { PLACEHOLDER } from './core/turns/marker-text.js';
/** The factory, its options, its handle and its status snapshot. */
export { createGateway, type Gateway } from './gateway.js';
export { cronProblem, timezoneProblem } from './io/automation/cron.js';
/** Send pacing knobs (`GatewayOptions.budget`). */
export type { AutomationRun, Injector } from './io/automation/inject.js';
export type { ConfiguredSchedule, ScheduleOptions } from './io/automation/schedule-options.js';
/** The webhook receiver's options (`GatewayOptions.webhooks`) and the signature senders compute. */
export { signBody } from './io/automation/signature.js';
export type { WebhookHookOptions, WebhookOptions } from './io/automation/webhook-options.js';
/** Progress-card timing (`GatewayOptions.card`). */
export type { CardOptions } from './io/card/card-driver.js';
/** Prometheus metrics (off by default): the endpoint the cli starts and the interface the gateway calls. */
export {
  createMetrics,
  type GatewayMetrics,
  type MetricsOptions,
  type MetricsServer,
  noMetrics,
} from './io/ops/metrics.js';
export { EXPIRED } from './io/prompts/prompts.js';
/** The local day of a time zone, as the daily budgets count it (`GatewayOptions.spend`). */
export { type LocalDay, localDay } from './io/spend/local-day.js';
export type { SpendOptions } from './io/spend/spend-ledger.js';
/** Speech to text for voice notes (`GatewayOptions.voice`): the backends' options and the outcomes. */
export { createTranscriber } from './io/voice/transcriber.js';
export {
  type CommandVoiceOptions,
  DEFAULT_VOICE_MAX_SECONDS,
  DEFAULT_VOICE_TIMEOUT_MS,
  type HttpVoiceOptions,
  type Transcriber,
  type Transcription,
  type VoiceFile,
  type VoiceOptions,
} from './io/voice/voice-types.js';
export type { GatewayOptions, GatewayStatus } from './options.js';
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
export { type GatewayStore, openGatewayStore } from './store/store.js';
