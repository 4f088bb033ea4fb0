/**
 * Shortening a tool's input for the wire: labels on the card and the one-line summary on a permission
 * prompt. The gateway never needs a 2 MB file body to draw a label, and a frame has a size cap.
 */

import { cutEnd, cutMiddle, visibleText } from '@switchyard/card';
import { PROMPT_SUMMARY_MAX, type SUGGESTION_KINDS } from '@switchyard/protocol/common';

/** The kind of a suggestion, as the protocol names it. */
export type SuggestionKind = (typeof SUGGESTION_KINDS)[number];

const MAX_STRING = 500;
const MAX_KEYS = 30;

/** The input with every string longer than 500 characters cut, nested values included, at most 30 keys. */
export function shortenInput(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let keys = 0;
  for (const [key, value] of Object.entries(input)) {
    if (keys++ >= MAX_KEYS) break;
    out[key] = shortenValue(value, 0);
  }
  return out;
}

function shortenValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return cutEnd(value, MAX_STRING + 1);
  if (depth > 4)
    return Array.isArray(value) ? '[…]' : typeof value === 'object' && value !== null ? '{…}' : value;
  if (Array.isArray(value)) return value.slice(0, MAX_KEYS).map((item) => shortenValue(item, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value).slice(0, MAX_KEYS))
      out[key] = shortenValue(item, depth + 1);
    return out;
  }
  return value;
}

/** The model's (or the CLI's) description of a call, as a prompt shows it: about this long at most. */
export const DESCRIPTION_MAX = 200;

/** What a permission prompt says a call will do, and whether any of its input was left out to say it. */
export interface ToolCallText {
  /** Words that follow "Claude wants to", at most {@link PROMPT_SUMMARY_MAX} long. */
  summary: string;
  /**
   * Something of the input is not in `summary` (a part cut in the middle, a long description cut): the
   * gateway then sends the whole input as a file before the prompt, so Allow never approves unseen text.
   */
  cut: boolean;
}

/**
 * What a tool call will do, in words that follow "Claude wants to" on a permission prompt: `run this
 * command: …`, `write hello.md (/work/hello.md): …`. Nothing that Allow approves is hidden:
 * - the description (the CLI's own or the model's words about the call, labelled as such) comes first,
 *   cut to {@link DESCRIPTION_MAX}, so it can never push the end of the command out of view;
 * - head and tail are kept of the thing approved alone (the command, the content written, the tool's
 *   whole input as JSON for any other tool), around a count of what is not shown ({@link cutMiddle});
 * - whitespace runs are collapsed and invisible characters shown ({@link visibleText}).
 * `cut` says whether anything was left out, so the whole input can be shown beside the prompt.
 */
export function describeToolCall(
  toolName: string,
  input: Record<string, unknown>,
  description?: string,
): ToolCallText {
  const pick = (key: string): string | undefined =>
    typeof input[key] === 'string' ? visibleText(input[key] as string) : undefined;
  const file = pick('file_path') ?? pick('notebook_path') ?? pick('path');
  const verb = FILE_VERBS[toolName];
  const said = visibleText(description ?? (toolName === 'Bash' ? (pick('description') ?? '') : ''));
  const shownSaid = said === '' || (file !== undefined && said === baseName(file)) ? '' : said;
  const note = shownSaid === '' ? '' : ` (described as: ${cutEnd(shownSaid, DESCRIPTION_MAX)})`;
  let cut = shownSaid.length > DESCRIPTION_MAX;
  /** `head`, then each part cut in the middle to share what room the summary has left. */
  const compose = (head: string, parts: readonly { label: string; text: string }[]): string => {
    const fixed = head.length + parts.reduce((n, p) => n + p.label.length, 0);
    let room = Math.max(0, PROMPT_SUMMARY_MAX - fixed);
    let out = head;
    parts.forEach((part, i) => {
      const share = Math.floor(room / (parts.length - i));
      const shown = cutMiddle(part.text, share);
      if (shown !== part.text) cut = true;
      room -= shown.length;
      out += `${part.label}${shown}`;
    });
    return out;
  };
  let summary: string;
  if (toolName === 'Bash' && pick('command') !== undefined)
    summary = compose(`run this command${note}`, [{ label: ': ', text: pick('command') ?? '' }]);
  else if (verb && file !== undefined) {
    const head = `${verb} ${baseName(file)} (${file})${note}`;
    const content = pick('content') ?? pick('new_source');
    const edits = Array.isArray(input.edits) ? input.edits : undefined;
    if (toolName === 'Write' || toolName === 'NotebookEdit')
      summary = content === undefined ? head : compose(head, [{ label: ': ', text: content }]);
    else if (toolName === 'Edit' && pick('new_string') !== undefined)
      summary = compose(head, [
        { label: ', replacing: ', text: pick('old_string') ?? '' },
        { label: ' with: ', text: pick('new_string') ?? '' },
      ]);
    else if (edits !== undefined)
      summary = compose(head, [{ label: ': ', text: visibleText(JSON.stringify(edits)) }]);
    else summary = head;
  } else if (toolName === 'WebFetch' && pick('url') !== undefined)
    summary = compose(`fetch${note}`, [{ label: ' ', text: pick('url') ?? '' }]);
  else if (toolName === 'WebSearch' && pick('query') !== undefined)
    summary = compose(`search the web${note} for`, [{ label: ' ', text: pick('query') ?? '' }]);
  else if ((toolName === 'Grep' || toolName === 'Glob') && pick('pattern') !== undefined)
    summary = compose(`search${note} for`, [
      { label: ' ', text: `${pick('pattern')}${file !== undefined ? ` in ${file}` : ''}` },
    ]);
  // Any other tool (an MCP server's, say) shows its whole input: one field of it (`command: "ls"`) once
  // hid the `args` that made it `ls && curl … | sh`.
  else
    summary = compose(`use ${visibleText(toolName)}${note}`, [
      { label: ': ', text: visibleText(JSON.stringify(input)) },
    ]);
  const fitted = cutMiddle(summary, PROMPT_SUMMARY_MAX);
  return { summary: fitted, cut: cut || fitted !== summary };
}

/** {@link describeToolCall}'s words alone. */
export function summarizeToolCall(
  toolName: string,
  input: Record<string, unknown>,
  description?: string,
): string {
  return describeToolCall(toolName, input, description).summary;
}

/** The file tools, as the verb a prompt says for each. */
const FILE_VERBS: Readonly<Record<string, string>> = {
  Write: 'write',
  Edit: 'edit',
  MultiEdit: 'edit',
  NotebookEdit: 'edit',
  Read: 'read',
};

function baseName(path: string): string {
  return path.replace(/\/+$/, '').split('/').pop() || path;
}

/** The kind of one of the CLI's `permission_suggestions`: what the gateway offers it under. */
export function suggestionKind(suggestion: unknown): SuggestionKind {
  const type =
    typeof suggestion === 'object' && suggestion !== null
      ? (suggestion as { type?: unknown }).type
      : undefined;
  return type === 'addRules' || type === 'setMode' || type === 'addDirectories' ? type : 'other';
}

/**
 * The suggestions an `allow_always` answer applies: those at `indexes` among the ones offered (the first
 * {@link MAX_SUGGESTIONS}), or, without indexes, every `addRules` one among them. Never one that was not
 * shown to the user.
 */
export function chosenSuggestions(
  suggestions: readonly unknown[],
  indexes: readonly number[] | undefined,
): unknown[] {
  const offered = suggestions.slice(0, MAX_SUGGESTIONS);
  if (indexes === undefined) return offered.filter((s) => suggestionKind(s) === 'addRules');
  return [...new Set(indexes)].sort((a, b) => a - b).flatMap((i) => (i < offered.length ? [offered[i]] : []));
}

/** How many of the CLI's suggestions a prompt offers (the protocol's cap). */
export const MAX_SUGGESTIONS = 20;

/**
 * A label for one of the CLI's `permission_suggestions`, listing everything applying it would change
 * (every rule, every directory) in words that follow "Allow, and"; the gateway shows it before or on
 * the button that applies it, with {@link suggestionWhere}.
 */
export function describeSuggestion(suggestion: unknown): string {
  if (typeof suggestion !== 'object' || suggestion === null) return 'always allow';
  const s = suggestion as Record<string, unknown>;
  switch (s.type) {
    case 'addRules': {
      const rules = Array.isArray(s.rules) ? s.rules : [];
      const names = rules
        .map((rule) => {
          const r = (rule ?? {}) as Record<string, unknown>;
          const tool = typeof r.toolName === 'string' ? r.toolName : '?';
          return typeof r.ruleContent === 'string' ? `${tool}(${r.ruleContent})` : tool;
        })
        .join(', ');
      return cutEnd(visibleText(`${s.behavior === 'deny' ? 'deny' : 'allow'} ${names}`), 500);
    }
    case 'addDirectories': {
      const dirs = Array.isArray(s.directories) ? s.directories.filter((d) => typeof d === 'string') : [];
      return cutEnd(visibleText(`allow access to ${dirs.join(', ')}`), 500);
    }
    case 'setMode':
      return cutEnd(MODE_WORDS[String(s.mode)] ?? visibleText(`switch to ${String(s.mode)} mode`), 500);
    default:
      return cutEnd(visibleText(String(s.type)), 500);
  }
}

/** What switching to each permission mode does, in words. */
const MODE_WORDS: Readonly<Record<string, string>> = {
  acceptEdits: 'allow all edits from now on',
  default: 'ask before each tool from now on',
  plan: 'only plan from now on (no changes)',
  bypassPermissions: 'allow everything without asking from now on',
};

/**
 * Where a suggestion applies, in words, from its `destination`: `this conversation` (`session`), or
 * every conversation that reads the settings file it would be written to (`localSettings` and
 * `projectSettings` are under `workDir`/.claude, `userSettings` is the user's own).
 */
export function suggestionWhere(suggestion: unknown, workDir: string): string | undefined {
  const destination =
    typeof suggestion === 'object' && suggestion !== null
      ? (suggestion as { destination?: unknown }).destination
      : undefined;
  switch (destination) {
    case 'session':
      return 'this conversation';
    case 'cliArg':
      return 'this Claude process';
    case 'localSettings':
      return cutEnd(`every conversation in ${visibleText(workDir)}`, 300);
    case 'projectSettings':
      return cutEnd(`every conversation in ${visibleText(workDir)}, and its .claude/settings.json`, 300);
    case 'userSettings':
      return 'every conversation of this user, in every directory';
    default:
      return undefined;
  }
}
