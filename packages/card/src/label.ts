/**
 * Human labels for tool calls: what a user needs to recognise the step ("Read src/app.ts", "Bash: run
 * the tests"), taken from the tool's input. Labels are raw text (escaped later, by the renderer), one
 * line, and at most {@link LABEL_MAX} long. Inputs are untrusted `unknown`s: a missing or non-string field
 * falls back to the tool's name, and nothing here throws.
 */
import { cutPath, cutText, oneLine } from './cut.js';

/** The longest label the card shows for one tool call. */
export const LABEL_MAX = 80;

/** How a group of finished calls of one tool is summarised: "Read 12 files". */
interface ToolKind {
  /** Verb phrase for a group, `{n}` replaced by the count. */
  readonly many: string;
  /** Which input field(s) make the label, first present wins. */
  readonly fields: readonly string[];
  /** How the field is shortened. */
  readonly shape: 'path' | 'text' | 'host';
}

const KINDS = {
  Read: { many: 'Read {n} files', fields: ['file_path', 'path'], shape: 'path' },
  Edit: { many: 'Edited {n} files', fields: ['file_path'], shape: 'path' },
  MultiEdit: { many: 'Edited {n} files', fields: ['file_path'], shape: 'path' },
  Write: { many: 'Wrote {n} files', fields: ['file_path'], shape: 'path' },
  NotebookEdit: { many: 'Edited {n} notebooks', fields: ['notebook_path'], shape: 'path' },
  Bash: { many: 'Ran {n} commands', fields: ['description', 'command'], shape: 'text' },
  BashOutput: { many: 'Checked output {n} times', fields: ['bash_id'], shape: 'text' },
  Grep: { many: 'Searched {n} patterns', fields: ['pattern'], shape: 'text' },
  Glob: { many: 'Listed {n} patterns', fields: ['pattern'], shape: 'text' },
  LS: { many: 'Listed {n} folders', fields: ['path'], shape: 'path' },
  WebFetch: { many: 'Fetched {n} pages', fields: ['url'], shape: 'host' },
  WebSearch: { many: 'Searched the web {n} times', fields: ['query'], shape: 'text' },
  Task: { many: 'Started {n} sub-agents', fields: ['description', 'subagent_type'], shape: 'text' },
  Agent: { many: 'Started {n} sub-agents', fields: ['description', 'subagent_type'], shape: 'text' },
  TodoWrite: { many: 'Updated the plan {n} times', fields: [], shape: 'text' },
} as const satisfies Readonly<Record<string, ToolKind>>;

/** Switchyard's own file tools: the card shows what was sent, "📎 report.pdf", not the tool. */
const FILE_TOOLS = {
  mcp__switchyard__send_file: 'Sent {n} files',
  mcp__switchyard__send_photo: 'Sent {n} pictures',
  mcp__switchyard__send_files: 'Sent {n} albums',
} as const satisfies Readonly<Record<string, string>>;

/**
 * The CLI's question tool: the card shows the question asked ("Question: Which colour…?"), since its
 * name means nothing to a user. Its input is `{ questions: [{ question, … }] }`.
 */
const QUESTION_TOOL = 'AskUserQuestion';

function questionStep(input: Readonly<Record<string, unknown>>, max: number): string {
  const questions = Object.hasOwn(input, 'questions') ? input.questions : undefined;
  const first: unknown = Array.isArray(questions) ? questions[0] : undefined;
  const asked =
    typeof first === 'object' && first !== null && Object.hasOwn(first, 'question')
      ? (first as { question: unknown }).question
      : undefined;
  if (typeof asked !== 'string' || asked.trim() === '') return 'A question for you';
  const more = Array.isArray(questions) && questions.length > 1 ? ` (+${questions.length - 1} more)` : '';
  return cutText(`Question: ${oneLine(asked)}${more}`, max);
}

/** The file names a file tool's input sends (`path` or `paths`), last path segment only. */
function sentNames(input: Readonly<Record<string, unknown>>): string[] {
  const raw = Object.hasOwn(input, 'paths') ? input.paths : Object.hasOwn(input, 'path') ? [input.path] : [];
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((p) => (typeof p === 'string' && p.trim() !== '' ? [p.split('/').pop() || p] : []));
}

/** "📎 report.pdf", "📎 a.png, b.png", "📎 3 files: a.png, …" — one line, at most `max` long. */
function fileStep(input: Readonly<Record<string, unknown>>, max: number): string {
  const names = sentNames(input);
  if (names.length === 0) return '📎 a file';
  const list = oneLine(names.join(', '));
  return cutText(names.length > 2 ? `📎 ${names.length} files: ${list}` : `📎 ${list}`, max);
}

function kindOf(name: string): ToolKind | undefined {
  return Object.hasOwn(KINDS, name) ? KINDS[name as keyof typeof KINDS] : undefined;
}

/** The host of an absolute URL, or undefined. No `URL` global: the card has no DOM or Node types. */
export function urlHost(url: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^/?#:]+)/i.exec(url.trim());
  return match?.[1]?.toLowerCase();
}

/** `mcp__server__tool` → `server: tool`; other names unchanged. */
export function toolDisplayName(name: string): string {
  const match = /^mcp__([^_]+(?:_[^_]+)*)__(.+)$/.exec(name);
  return match ? `${match[1]}: ${match[2]}` : name;
}

function firstString(
  input: Readonly<Record<string, unknown>>,
  fields: readonly string[],
): string | undefined {
  for (const field of fields) {
    const value = Object.hasOwn(input, field) ? input[field] : undefined;
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

/**
 * The detail of a tool call — the file, the command, the pattern, the host — or `''` when the input
 * has none the card knows how to read. One line, at most `max` long.
 */
export function toolDetail(name: string, input: Readonly<Record<string, unknown>>, max = LABEL_MAX): string {
  const kind = kindOf(name);
  if (kind === undefined || kind.fields.length === 0) return '';
  const raw = firstString(input, kind.fields);
  if (raw === undefined) return '';
  const line = oneLine(raw);
  switch (kind.shape) {
    case 'path':
      return cutPath(line, max);
    case 'host':
      return cutText(urlHost(line) ?? line, max);
    case 'text':
      return cutText(line, max);
  }
}

/**
 * A one-line label for a tool call: the tool's display name and its detail, such as
 * `Read …/src/app.ts` or `Bash: Run the unit tests`. Unknown tools fall back to their name.
 */
export function toolLabel(name: string, input: Readonly<Record<string, unknown>>, max = LABEL_MAX): string {
  if (Object.hasOwn(FILE_TOOLS, name)) return fileStep(input, max);
  if (name === QUESTION_TOOL) return questionStep(input, max);
  const display = cutText(oneLine(toolDisplayName(name)), 40);
  const detail = toolDetail(name, input, Math.max(8, max - display.length - 2));
  return detail === '' ? display : `${display}${kindOf(name)?.shape === 'path' ? ' ' : ': '}${detail}`;
}

/** Summary of `count` finished calls of one tool: "Read 12 files", or "mcp: x ×3" for unknown tools. */
export function toolGroupSummary(name: string, count: number): string {
  const kind = kindOf(name);
  if (kind !== undefined) return kind.many.replace('{n}', String(count));
  if (name === QUESTION_TOOL) return `Asked ${count} questions`;
  if (Object.hasOwn(FILE_TOOLS, name))
    return `📎 ${FILE_TOOLS[name as keyof typeof FILE_TOOLS].replace('{n}', String(count))}`;
  return `${cutText(oneLine(toolDisplayName(name)), 40)} ×${count}`;
}
