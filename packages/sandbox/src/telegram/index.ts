/**
 * The local Telegram Bot API sandbox: a server that speaks the Bot API subset Switchyard uses, with
 * Telegram's limits and error texts, and a control handle for tests and the web chat view.
 */
export { BotApiError, ERROR_TEXTS } from './api-error.js';
export { BOT_API_METHODS, type BotApiMethod } from './bot-api.js';
export type { SandboxEvent, SandboxEventType, SandboxListener } from './events.js';
export { type HtmlParseResult, parseTelegramHtml, renderTelegramHtml } from './html.js';
export { TEXT_LIMITS } from './message-content.js';
export { NEWER_API_PARTS, type NewerApiPart } from './newer-api.js';
export { type BucketRate, DEFAULT_RATE_LIMITS, type RateLimits } from './rate-limiter.js';
export type * from './records.js';
export { RICH_LIMITS, renderRich } from './rich-message.js';
export type {
  ChatView,
  InjectedFailure,
  TelegramServer,
  TelegramServerAddress,
  TelegramServerOptions,
} from './server-options.js';
export type { ApiCallRecord, ApiStats } from './stats.js';
export { createTelegramServer } from './telegram-server.js';
export type { ButtonSelector, DocumentInput, PhotoInput, SendOptions, VoiceInput } from './user-actions.js';
export type * from './wire.js';
