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

/**
 * What a tool call will do, in words that follow "Claude wants to" on a permission prompt: `run this
 * command: …`, `write hello.md (/work/hello.md)`. Nothing of the input is hidden: whitespace runs are
 * collapsed and invisible characters shown ({@link visibleText}), and a summary still over
 * {@link PROMPT_SUMMARY_MAX} keeps its head and its tail around a count of what is not shown. The
 * `description` is the CLI's own or the model's words about the call, so it is labelled as such.
 */
export function summarizeToolCall(
  toolName: string,
  input: Record<string, unknown>,
  description?: string,
): string {
  const pick = (key: string): string | undefined =>
    typeof input[key] === 'string' ? visibleText(input[key] as string) : undefined;
  const file = pick('file_path') ?? pick('notebook_path') ?? pick('path');
  const verb = FILE_VERBS[toolName];
  let action: string;
  if (toolName === 'Bash' && pick('command') !== undefined) action = `run this command: ${pick('command')}`;
  else if (verb && file !== undefined) action = `${verb} ${baseName(file)} (${file})`;
  else if (toolName === 'WebFetch' && pick('url') !== undefined) action = `fetch ${pick('url')}`;
  else if (toolName === 'WebSearch' && pick('query') !== undefined)
    action = `search the web for ${pick('query')}`;
  else if ((toolName === 'Grep' || toolName === 'Glob') && pick('pattern') !== undefined)
    action = `search for ${pick('pattern')}${file !== undefined ? ` in ${file}` : ''}`;
  else {
    const subject = pick('command') ?? file ?? pick('url') ?? pick('query') ?? pick('prompt');
    action = `use ${visibleText(toolName)}: ${subject ?? visibleText(JSON.stringify(input))}`;
  }
  const said = description === undefined ? '' : visibleText(description);
  const note =
    said === '' || (file !== undefined && said === baseName(file)) ? '' : ` (described as: ${said})`;
  return cutMiddle(`${action}${note}`, PROMPT_SUMMARY_MAX);
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
