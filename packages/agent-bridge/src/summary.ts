/**
 * Shortening a tool's input for the wire: labels on the card and the one-line summary on a permission
 * prompt. The gateway never needs a 2 MB file body to draw a label, and a frame has a size cap.
 */

import type { SUGGESTION_KINDS } from '@switchyard/protocol';

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
  if (typeof value === 'string') return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
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

/** One readable line saying what a tool call will do, for a permission prompt. */
export function summarizeToolCall(
  toolName: string,
  input: Record<string, unknown>,
  description?: string,
): string {
  const pick = (key: string): string | undefined =>
    typeof input[key] === 'string' ? (input[key] as string) : undefined;
  const subject =
    pick('command') ??
    pick('file_path') ??
    pick('path') ??
    pick('url') ??
    pick('pattern') ??
    pick('query') ??
    pick('prompt');
  const core = subject !== undefined ? `${toolName}: ${subject}` : `${toolName} ${JSON.stringify(input)}`;
  const line = description && subject !== undefined ? `${core} (${description})` : core;
  return line.length > 4000 ? `${line.slice(0, 3999)}…` : line;
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
 * (every rule, every directory); the gateway shows it before the button that applies it.
 */
export function describeSuggestion(suggestion: unknown): string {
  if (typeof suggestion !== 'object' || suggestion === null) return 'always allow';
  const s = suggestion as Record<string, unknown>;
  const where = typeof s.destination === 'string' ? ` (${s.destination})` : '';
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
      return `${s.behavior === 'deny' ? 'deny' : 'allow'} ${names}${where}`.slice(0, 500);
    }
    case 'addDirectories': {
      const dirs = Array.isArray(s.directories) ? s.directories.filter((d) => typeof d === 'string') : [];
      return `allow access to ${dirs.join(', ')}${where}`.slice(0, 500);
    }
    case 'setMode':
      return `switch to ${String(s.mode)} mode${where}`.slice(0, 500);
    default:
      return `${String(s.type)}${where}`.slice(0, 500);
  }
}
