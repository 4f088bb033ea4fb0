/**
 * Redaction of secrets in text that may reach a log: error messages, a CLI's stderr, anything a library
 * put into an exception. Pure functions; the cli's logger applies {@link redactSecrets} to every string
 * of every line, and callers that hold text which may be a user's message log only its shape
 * ({@link describeStderr}), never the text.
 */

/** A Telegram bot token: the bot's numeric id, a colon, 35 characters of secret. */
const BOT_TOKEN = /(?<!\d)\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g;
/** An Anthropic API or OAuth key (`sk-ant-api03-…`, `sk-ant-oat01-…`). */
const ANTHROPIC_KEY = /sk-ant-[A-Za-z0-9_-]+/g;

/** What replaces a secret found in text. */
export const REDACTED = '[redacted]';

/** `text` with every bot token and Anthropic key replaced by {@link REDACTED}. */
export function redactSecrets(text: string): string {
  return text.replace(BOT_TOKEN, REDACTED).replace(ANTHROPIC_KEY, REDACTED);
}

/** What kind of line ends a stderr tail: enough to triage from a log without its text. */
export type StderrClass = 'empty' | 'stack_frame' | 'error' | 'warning' | 'auth' | 'network' | 'other';

/**
 * The shape of a CLI's stderr tail for a log line: its size and the class of its last line. The text
 * itself is not returned, since a CLI may echo a user's message or a tool's output there; it is shown
 * only to the chat the process served.
 */
export function describeStderr(tail: string): {
  stderrLines: number;
  stderrChars: number;
  stderrLastLine: StderrClass;
} {
  const lines = tail.split('\n').filter((line) => line.trim() !== '');
  const last = lines[lines.length - 1] ?? '';
  return { stderrLines: lines.length, stderrChars: tail.length, stderrLastLine: classify(last) };
}

function classify(line: string): StderrClass {
  const text = line.trim();
  if (text === '') return 'empty';
  if (/^at\s/.test(text)) return 'stack_frame';
  if (/unauthori[sz]ed|invalid api key|authentication|not logged in|\blogin\b|401|403/i.test(text))
    return 'auth';
  if (/ECONN|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|socket hang up|network/i.test(text)) return 'network';
  if (/\b(error|exception|fatal|panic)\b/i.test(text)) return 'error';
  if (/\bwarn(ing)?\b/i.test(text)) return 'warning';
  return 'other';
}
