/**
 * pino JSON lines made readable at a terminal, for `switchyard logs`: time, level, service, message
 * and the remaining fields as `key=value`. A line that is not JSON passes through unchanged.
 */
import { createInterface } from 'node:readline';

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};
const COLORS: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[41m' };
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'agent', 'service', 'hostname']);

/** One pino JSON line as `HH:MM:SS.mmm LEVEL agent/service: msg key=value…`. */
export function prettyLine(line: string, color = false): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof record !== 'object' || record === null || typeof record.level !== 'number') return line;
  const level = record.level;
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const who = [record.agent, record.service].filter((v) => typeof v === 'string').join('/');
  const rest = Object.entries(record)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  const text = `${time} ${LEVELS[level] ?? String(level)} ${who}: ${String(record.msg ?? '')}${rest ? ` ${rest}` : ''}`;
  const start = color ? COLORS[level] : undefined;
  return start ? `${start}${text}\x1b[0m` : text;
}

/** Pipes `input`'s lines through {@link prettyLine} to `output`, coloured. */
export function prettyLines(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): void {
  const lines = createInterface({ input });
  lines.on('line', (line) => output.write(`${prettyLine(line, true)}\n`));
}
