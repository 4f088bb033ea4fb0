/**
 * The process logger: pino JSON on stdout, one line an event (STYLE.md §9). Level from
 * `$SWITCHYARD_LOG_LEVEL` (default `info`). Every line carries the agent and the service.
 * At a terminal (`run`, the sandbox) the lines are printed readable instead, as `switchyard logs`
 * prints them; under systemd they keep journald's priority prefix (see {@link destinationFor}).
 *
 * Invariant: every key appears once in a line (log shippers refuse duplicate keys, and pino writes a
 * child's bindings after its parent's without merging them). So the bindings are kept here, not in
 * pino: a child's are merged over its parent's, its `component` appended to the parent's as a path
 * (`gateway.protocol.protocol-server`), and a line's own fields win over the bindings they repeat.
 *
 * Invariant: no line carries a bot token, an Anthropic key or a field that holds a user's text, at any
 * depth. pino's `redact` paths name fixed depths only, so every line's fields, its message and every
 * child's bindings go through {@link scrubLogFields} instead.
 */
import type { Logger } from '@switchyard/protocol';
import { REDACTED, redactSecrets } from '@switchyard/protocol';
import { type DestinationStream, pino } from 'pino';
import { journalDestination, wantsJournal } from './journal.js';
import { prettyLine } from './log-view.js';

/** Field names whose value is never written, wherever they appear: secrets, and a user's words. */
const CENSORED_KEYS = new Set([
  'token',
  'bottoken',
  'apikey',
  'authorization',
  'password',
  'secret',
  'text',
  'caption',
]);

/** Deeper than any field a Switchyard line carries; what lies below is dropped, not walked. */
const MAX_DEPTH = 8;

/**
 * `value` with every field named in {@link CENSORED_KEYS} (case-insensitive) replaced by `[redacted]`
 * and every string passed through {@link redactSecrets}, at any depth. Cycles and very deep values are
 * cut rather than followed.
 */
export function scrubLogFields(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value) || depth > MAX_DEPTH) return '[…]';
  seen.add(value);
  if (value instanceof Error) {
    return { type: value.name, message: redactSecrets(value.message) };
  }
  if (Array.isArray(value)) return value.map((item) => scrubLogFields(item, depth + 1, seen));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = CENSORED_KEYS.has(key.toLowerCase()) ? REDACTED : scrubLogFields(item, depth + 1, seen);
  }
  return out;
}

/** Where the lines go: stdout, or a terminal standing in for it. */
export interface LogOutput {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

/**
 * The destination of a service's lines in `env`, writing to `out`: journald's prefixed JSON under
 * systemd (`$JOURNAL_STREAM`) or with `SWITCHYARD_LOG_FORMAT=journal`; readable lines when `out` is a
 * terminal or with `=pretty`; otherwise (and with `=json`) undefined, pino's own JSON on stdout.
 */
export function destinationFor(
  env: Record<string, string | undefined>,
  out: LogOutput = process.stdout,
): DestinationStream | undefined {
  if (wantsJournal(env)) return journalDestination(out);
  const format = env.SWITCHYARD_LOG_FORMAT;
  if (format === 'pretty' || (!format && out.isTTY === true)) {
    return {
      write: (line: string) => out.write(`${prettyLine(line.replace(/\n$/, ''), out.isTTY === true)}\n`),
    };
  }
  return undefined;
}

/** The pino logger for one service process; `bindings` are stamped on every line. */
export function createLogger(
  bindings: { agent?: string; service: string },
  env = process.env,
  destination: DestinationStream | undefined = destinationFor(env),
): Logger {
  const options: pino.LoggerOptions = {
    level: env.SWITCHYARD_LOG_LEVEL ?? 'info',
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      log: (fields) => scrubLogFields(fields) as Record<string, unknown>,
    },
    hooks: {
      // The message string (and any interpolation arguments) is not a field: scrub it here.
      logMethod(args, method) {
        method.apply(this, args.map((arg) => scrubLogFields(arg)) as Parameters<typeof method>);
      },
    },
  };
  return bound(destination ? pino(options, destination) : pino(options), { ...bindings });
}

/**
 * A logger that stamps `bindings` on each line itself, so each key is written once. pino applies no
 * formatter to bindings: a child's are scrubbed on the way in.
 */
function bound(logger: pino.Logger, bindings: Record<string, unknown>): Logger {
  const line = (fields: object) => ({ ...bindings, ...fields });
  return {
    debug: (fields, message) => logger.debug(line(fields), message),
    info: (fields, message) => logger.info(line(fields), message),
    warn: (fields, message) => logger.warn(line(fields), message),
    error: (fields, message) => logger.error(line(fields), message),
    child: (more) => bound(logger, mergeBindings(bindings, scrubLogFields(more) as Record<string, unknown>)),
  };
}

/** `child` over `parent`: later values win, and `component`s join into a path. */
export function mergeBindings(
  parent: Record<string, unknown>,
  child: Record<string, unknown>,
): Record<string, unknown> {
  const merged = { ...parent, ...child };
  const [outer, inner] = [parent.component, child.component];
  if (typeof outer === 'string' && typeof inner === 'string' && outer !== inner) {
    merged.component = `${outer}.${inner}`;
  }
  return merged;
}
