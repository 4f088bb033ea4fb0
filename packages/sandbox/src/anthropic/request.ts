/**
 * Reading a Messages API request the way the scripted model needs to: which conversation it belongs to,
 * what the user said last, which tool results came back, and how far the model's turn has got.
 *
 * Pure: no I/O. Everything here is measured against what `claude` 2.1.328 sends (see the sandbox's
 * `test/anthropic*.test.ts` and `packages/agent-bridge/test/fixtures/README.md`): user messages are arrays
 * of blocks where the CLI prepends `<system-reminder>` text blocks to what the user typed, the list of
 * messages may hold `role: "system"` entries (the environment block), and the main agent's tools include
 * `Agent` (the sub-agent tool, shown as `Task` in `system/init`).
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
   * The latest text the user wrote (system reminders stripped, several text blocks joined with
   * newlines); empty when there is none. For a sub-agent, its prompt.
   */
  readonly userText: string;
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

/** Flattens string-or-blocks content to the text a person wrote, dropping system reminders. */
export function userTextOf(content: RequestMessage['content']): string {
  if (typeof content === 'string') return stripReminders(content);
  const parts: string[] = [];
  for (const block of content) {
    if (block.type !== 'text' || typeof block.text !== 'string') continue;
    const text = stripReminders(block.text);
    if (text !== '') parts.push(text);
  }
  return parts.join('\n');
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
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m === undefined || m.role !== 'user') continue;
    const text = userTextOf(m.content);
    if (text !== '') {
      userTextIndex = i;
      userText = text;
      break;
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
    kind: classify(tools),
    model: typeof req.model === 'string' ? req.model : '',
    userText,
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

function classify(tools: readonly string[]): RequestKind {
  if (tools.length === 0) return 'side';
  return tools.includes('Agent') || tools.includes('Task') ? 'main' : 'subagent';
}
