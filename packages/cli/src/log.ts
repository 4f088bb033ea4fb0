/**
 * The process logger: pino JSON on stdout, one line an event (STYLE.md §9). Level from
 * `$SWITCHYARD_LOG_LEVEL` (default `info`). Every line carries the agent and the service.
 */
import type { Logger } from '@switchyard/protocol';
import { pino } from 'pino';
import { journalDestinationFor } from './journal.js';

/** The pino logger for one service process; `bindings` are stamped on every line. */
export function createLogger(bindings: { agent?: string; service: string }, env = process.env): Logger {
  return pino(
    {
      level: env.SWITCHYARD_LOG_LEVEL ?? 'info',
      base: { ...bindings, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Defence in depth: fields that might ever carry a secret or a user's text are never written.
      redact: { paths: ['token', '*.token', 'text', '*.text', 'apiKey', '*.apiKey'], censor: '[redacted]' },
    },
    journalDestinationFor(env),
  ) as unknown as Logger;
}
