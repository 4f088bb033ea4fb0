/**
 * Local stand-ins for the outside world: a Telegram Bot API server, a scripted Anthropic Messages API
 * and an OpenAI-compatible transcription server.
 */

export * from './anthropic/index.js';
export * from './telegram/index.js';
export * from './transcription/index.js';
