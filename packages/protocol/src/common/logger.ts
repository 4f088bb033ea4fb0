import { redactSecrets } from './redact.js';

/**
 * The logging surface every package accepts. It is the subset of pino's `Logger` that Switchyard uses,
 * so the cli can hand a pino logger to any factory while libraries stay free of a logging dependency.
 * Convention: `log.info({ event: 'pin', chat, turn }, 'card pinned')` — fields first, then a short message.
 * Message texts and the bot token never go into a log line.
 */
export interface Logger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything; the default for factories when none is given. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

/**
 * The error's message (and code when it has one), for a log field, with bot tokens and API keys
 * redacted: a library's error may quote a request URL or a header.
 */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return redactSecrets(code ? `${code}: ${err.message}` : err.message);
  }
  return redactSecrets(String(err));
}
