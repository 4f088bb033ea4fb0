/**
 * Shortening a tool's input for the wire: labels on the card and the one-line summary on a permission
 * prompt. The gateway never needs a 2 MB file body to draw a label, and a frame has a size cap.
 */

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

/** A label for one of the CLI's `permission_suggestions`, shown on the "always allow" button. */
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
