/** Local stand-ins for the outside world: a Telegram Bot API server and a scripted Anthropic Messages API. */

export * from './anthropic/index.js';
export * from './telegram/index.js';
