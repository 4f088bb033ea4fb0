/**
 * Reading a Messages API request the way the scripted model needs to: which conversation it belongs to,
 * what the user said last, which tool results came back, and how far the model's turn has got.
 *
 * Pure: no I/O. Everything here is measured against what `claude` 2.1.328 sends (see the sandbox's
 * `test/anthropic*.test.ts` and `packages/agent-bridge/test/fixtures/README.md`): user messages are arrays
 * of blocks where the CLI prepends `<system-reminder>` text blocks to what the user typed, the list of
 * messages may hold `role: "system"` entries (the environment block), and the main agent's tools include
 * `Agent` (the sub-agent tool, shown as `Task` in `system/init`). A turn the CLI starts by itself when a
 * background sub-agent finishes has a user message holding only a system reminder with a
 * `<task-notification>` element; that element is its user text.
 */

/** One content block of a request message, as far as the scripted model reads it. */
export interface RequestBlock {
  readonly type: string;
  readonly text?: string;
  readonly tool_use_id?: string;
  readonly content?: unknown;
  readonly is_error?: boolean;
  readonly [key: string]: unknown;
}

/** One message of a request. The CLI also sends `role: "system"` messages between the turns. */
export interface RequestMessage {
  readonly role: string;
  readonly content: string | readonly RequestBlock[];
}

/** The subset of a `POST /v1/messages` body that the scripted model reads; the rest is recorded as is. */
export interface MessagesRequest {
  readonly model: string;
  readonly messages: readonly RequestMessage[];
  readonly system?: string | readonly { readonly type: string; readonly text: string }[];
  readonly tools?: readonly { readonly name: string; readonly [key: string]: unknown }[];
  readonly stream?: boolean;
  readonly max_tokens?: number;
  readonly [key: string]: unknown;
}

/**
 * Who is asking:
 * - `main`: the agent the user talks to (its system prompt is the CLI's agent prompt and it has the
 *   `Agent` tool);
 * - `subagent`: an agent started by an `Agent`/`Task` tool call (tools, but no `Agent` tool);
 * - `side`: a helper call with no tools (titles, summaries, classifiers), answered without touching the
 *   script.
 */
export type RequestKind = 'main' | 'subagent' | 'side';

/** A tool result the CLI sent back, flattened to text. */
export interface ToolResult {
  readonly toolUseId: string;
  /** The result's text (text blocks joined with newlines). */
  readonly text: string;
  /** True when the tool failed or the user denied it (the CLI sets `is_error`). */
  readonly isError: boolean;
}

/** What a request says about the conversation, derived once per request. */
export interface RequestView {
  readonly kind: RequestKind;
  readonly model: string;
  /**
   * The latest text the user wrote, a steer included (system reminders and slash-command echoes
   * stripped, several text blocks joined with newlines); empty when there is none. For a sub-agent, its
   * prompt. For a turn the CLI started after a background task ended, the
   * `<task-notification>…</task-notification>` element.
   */
  readonly userText: string;
  /**
   * `user` for typed text; `steer` for a message written while the previous turn ran, which the CLI
   * shows the model as a system message (or inside the next tool result) rather than a new user turn;
   * `task-notification` for a turn the CLI started itself; `none` when no text was found.
   */
  readonly userTextSource: UserTextSource;
  /** Index in `messages` of the message holding `userText`, or -1. */
  readonly userTextIndex: number;
  /** Assistant messages after the one holding `userText`: the number of model replies this turn so far. */
  readonly repliesSoFar: number;
  /** Tool results in the last message, if it is the CLI answering tool calls. */
  readonly toolResults: readonly ToolResult[];
  /** Names of the tools offered to the model. */
  readonly tools: readonly string[];
  /** The working directory the CLI announces in its environment block, when found. */
  readonly cwd: string | undefined;
  /** The system prompt flattened to text. */
  readonly systemText: string;
}

const REMINDER = /^\s*<system-reminder>[\s\S]*?<\/system-reminder>\s*/;
const TASK_NOTIFICATION = /<task-notification>[\s\S]*?<\/task-notification>/;
/** How the CLI surfaces a message written mid-turn (a steer), in a system message or a tool result. */
const STEER =
  /The user sent a new message while you were working:\n([\s\S]*?)\n\nThis is how Claude Code surfaces/g;
/** Text blocks the CLI adds around what the user typed: interrupt markers and local slash-command echoes. */
const META = /^(\[Request interrupted by user[^\]]*\]|<local-command-|<command-name>|<command-message>)/;

/** Where a request's {@link RequestView.userText} came from. */
export type UserTextSource = 'user' | 'steer' | 'task-notification' | 'none';

/**
 * Flattens string-or-blocks content to the text a person typed, dropping system reminders, interrupt
 * markers and slash-command echoes; for a message holding only a task notification, that notification.
 */
export function userTextOf(content: RequestMessage['content']): { text: string; source: UserTextSource } {
  const texts =
    typeof content === 'string'
      ? [content]
      : content.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : []));
  const typed = texts.map(stripReminders).filter((t) => t !== '' && !META.test(t));
  if (typed.length > 0) return { text: typed.join('\n'), source: 'user' };
  for (const t of texts) {
    const notification = TASK_NOTIFICATION.exec(t)?.[0];
    if (notification !== undefined) return { text: notification, source: 'task-notification' };
  }
  return { text: '', source: 'none' };
}

/** The last steer surfaced in a message (user or system role, tool results included), if any. */
function steerIn(message: RequestMessage): string | undefined {
  let found: string | undefined;
  for (const text of stringsIn(message.content)) for (const m of text.matchAll(STEER)) found = m[1];
  return found;
}

/** Every string inside a JSON value, depth first. */
function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}

function stripReminders(text: string): string {
  let rest = text;
  for (let m = REMINDER.exec(rest); m !== null; m = REMINDER.exec(rest)) rest = rest.slice(m[0].length);
  return rest.trim();
}

function flattenResult(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: unknown) =>
      typeof b === 'object' && b !== null && typeof (b as RequestBlock).text === 'string'
        ? (b as RequestBlock).text
        : '',
    )
    .filter((t) => t !== '')
    .join('\n');
}

function systemTextOf(system: MessagesRequest['system']): string {
  if (system === undefined) return '';
  if (typeof system === 'string') return system;
  return system.map((b) => b.text).join('\n');
}

/** Reads a request body; `undefined` when it is not a Messages request at all. */
export function viewRequest(body: unknown): RequestView | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const req = body as MessagesRequest;
  if (!Array.isArray(req.messages)) return undefined;
  const messages = req.messages;
  const tools = Array.isArray(req.tools) ? req.tools.map((t) => t.name) : [];
  const systemText = systemTextOf(req.system);

  let userTextIndex = -1;
  let userText = '';
  let userTextSource: UserTextSource = 'none';
  for (let i = messages.length - 1; i >= 0 && userTextIndex < 0; i--) {
    const m = messages[i];
    if (m === undefined || m.role === 'assistant') continue;
    const steer = steerIn(m);
    const typed = m.role === 'user' ? userTextOf(m.content) : { text: '', source: 'none' as const };
    if (typed.text !== '') {
      [userTextIndex, userText, userTextSource] = [i, typed.text, typed.source];
    } else if (steer !== undefined) {
      [userTextIndex, userText, userTextSource] = [i, steer, 'steer'];
    }
  }
  let repliesSoFar = 0;
  for (let i = userTextIndex + 1; i < messages.length; i++)
    if (messages[i]?.role === 'assistant') repliesSoFar++;

  const toolResults: ToolResult[] = [];
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const last = messages.at(-1);
  if (
    lastUser !== undefined &&
    (last === lastUser || last?.role === 'system') &&
    Array.isArray(lastUser.content)
  ) {
    for (const b of lastUser.content as readonly RequestBlock[]) {
      if (b.type !== 'tool_result') continue;
      toolResults.push({
        toolUseId: String(b.tool_use_id ?? ''),
        text: flattenResult(b.content),
        isError: b.is_error === true,
      });
    }
  }

  const cwd = /Primary working directory: (.+)/.exec(systemText + messagesSystemText(messages))?.[1]?.trim();
  return {
    kind: classify(tools, systemText),
    model: typeof req.model === 'string' ? req.model : '',
    userText,
    userTextSource,
    userTextIndex,
    repliesSoFar,
    toolResults,
    tools,
    cwd,
    systemText,
  };
}

function messagesSystemText(messages: readonly RequestMessage[]): string {
  return messages
    .filter((m) => m.role === 'system')
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : m.content.map((b) => (b.text as string | undefined) ?? '').join('\n'),
    )
    .join('\n');
}

/**
 * Sub-agent calls are told apart by the billing line the CLI puts first in the system prompt
 * (`cc_is_subagent=true`; they also carry an `x-claude-code-agent-id` header). Both the main agent and
 * general-purpose sub-agents are offered the `Agent` tool, so the tool list does not tell them apart.
 */
function classify(tools: readonly string[], systemText: string): RequestKind {
  if (tools.length === 0) return 'side';
  return systemText.includes('cc_is_subagent=true') ? 'subagent' : 'main';
}
