/**
 * "Nothing lost, nothing doubled", as one pure function over what the outside world recorded: the
 * Telegram stand-in's chats, the scripted model's requests and the services' logs. The fault matrix and
 * the soak both judge every run with {@link checkInvariants}; {@link collectEvidence} reads a running
 * system into its input.
 *
 * The conventions it relies on (see {@link question} and {@link answerTo}): every user message carries a
 * unique token `q-<conversation>-<n>`, and the script answers each with `Answer to <token>.`, so the
 * token names one message wherever it shows up. A turn that asks the user something (a permission for a
 * tool, an `AskUserQuestion`) puts its token in the tool's input, so the prompt's message, the tool call
 * and its one result are found by the same token; a tool that was allowed appends the token to a run log.
 *
 * The checker reads the classic reply path (placeholder, edits, HTML) and the rich one (drafts, then one
 * `sendRichMessage`; a group's placeholder edited into a rich message) alike: it reads only the messages
 * that stay in the chat, whose text is the HTML text or the rich Markdown, and never a draft.
 */

import { PLACEHOLDER } from '@switchyard/gateway';
import type { RecordedRequest, SandboxMessage } from '@switchyard/sandbox';
import type { System } from '../system.js';

/** One conversation of a case: where it lives and the tokens its user sent, in order. */
export interface ConversationPlan {
  /** Short lowercase name, part of every token (`q-<name>-<n>`). */
  name: string;
  chatId: number;
  /** The forum topic, when the conversation is one. */
  threadId?: number;
  /** Tokens sent, in the order the user sent them. */
  sent: string[];
  /**
   * Tokens whose turn a fault ended before its answer (the CLI killed mid-turn, a hung call stopped): each
   * still reached the model once, and its answer may be missing but never doubled.
   */
  interrupted: string[];
  /**
   * Tokens whose turn shows the user one prompt (a permission for a tool, or a question) that the user
   * answers (allows, or answers the question): the tool must have run, and the model got its one result.
   */
  prompted?: string[];
}

/** Everything the checker reads; plain data. */
export interface Evidence {
  conversations: readonly ConversationPlan[];
  /** Per conversation (same order): the bot's visible messages there (keyboard included), oldest first. */
  botMessages: readonly (readonly Pick<SandboxMessage, 'messageId' | 'text' | 'replyMarkup'>[])[];
  /** Per conversation: message ids pinned in its chat at the end. */
  pinned: readonly (readonly number[])[];
  /** The model's main-agent Messages request bodies, in arrival order. */
  requests: readonly unknown[];
  /** The services' combined output. */
  logs: string;
  /** Strings that must never appear in a log: the bot token, its secret part. */
  secrets: readonly string[];
  /** Callback queries pressed on prompts, with how many answers each got. */
  promptAnswers?: readonly { id: string; answers: number }[];
  /** The run log's lines: the token of each run of an allowed tool, one line per run. */
  toolRuns?: readonly string[];
}

/** One broken promise, named for the report. */
export interface Violation {
  conversation?: string;
  rule:
    | 'lost'
    | 'duplicated'
    | 'reordered'
    | 'unanswered'
    | 'answered-twice'
    | 'placeholder'
    | 'pin'
    | 'card'
    | 'prompt'
    | 'log';
  detail: string;
}

/** The per-run tally the soak prints. */
export interface Tally {
  sent: number;
  answeredOnce: number;
  lost: number;
  duplicated: number;
  strayPlaceholders: number;
  /** Prompt messages shown (permission requests and questions). */
  prompts: number;
  /** Prompted turns whose prompt was shown once, answered once, and whose tool ran once. */
  promptsAnsweredOnce: number;
}

/** The user message carrying token `q-<conversation>-<n>`. */
export const question = (token: string): string => `please answer ${token} now`;
/** The model's final text for the message carrying `token`. */
export const answerTo = (token: string): string => `Answer to ${token}.`;
/** Every token in a text, in order. */
export const tokensIn = (text: string): string[] => text.match(/\bq-[a-z0-9]+-\d+\b/g) ?? [];

/**
 * How a prompt's message starts: a permission request (🔐) or a question (❓), see the gateway's
 * keyboards; not a progress card waiting for that answer, which starts with ❓ too.
 */
const PROMPT_MARK = /^(🔐|❓)(?! Waiting for your answer)/u;

/** How a progress card that is not closed starts (see the card's renderer): no card may stay so. */
const OPEN_CARD = /^(⚙️ Working|❓ Waiting for your answer)\b/u;

/** Placeholders that a finished conversation must not show any more. */
const TRANSIENT: readonly string[] = [
  PLACEHOLDER.reply,
  PLACEHOLDER.queued,
  PLACEHOLDER.waiting,
  PLACEHOLDER.steer,
];

/** The text of the user-role messages of a Messages request body, in order. */
function userTexts(body: unknown): string[] {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((m: { role?: unknown; content?: unknown }) => {
    if (m.role !== 'user') return [];
    if (typeof m.content === 'string') return [m.content];
    if (!Array.isArray(m.content)) return [];
    return m.content.flatMap((b: { type?: unknown; text?: unknown }) =>
      b.type === 'text' && typeof b.text === 'string' ? [b.text] : [],
    );
  });
}

/** A tool call of the model and the results the CLI sent back for it, in one request's history. */
interface ToolCall {
  id: string;
  name: string;
  input: string;
  results: { isError: boolean; text: string }[];
}

/** The tool calls of a Messages request body, each with its results, in order. */
function toolCalls(body: unknown): ToolCall[] {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return [];
  const calls: ToolCall[] = [];
  for (const m of messages as { role?: unknown; content?: unknown }[]) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Record<string, unknown>[]) {
      if (m.role === 'assistant' && b.type === 'tool_use')
        calls.push({
          id: String(b.id),
          name: String(b.name),
          input: JSON.stringify(b.input ?? null),
          results: [],
        });
      if (m.role === 'user' && b.type === 'tool_result')
        calls
          .find((c) => c.id === b.tool_use_id)
          ?.results.push({ isError: b.is_error === true, text: JSON.stringify(b.content ?? '') });
    }
  }
  return calls;
}

/** A keyboard with at least one button. */
const live = (m: Pick<SandboxMessage, 'replyMarkup'>): boolean =>
  (m.replyMarkup?.inline_keyboard.flat().length ?? 0) > 0;

/** Checks every invariant; returns the violations (none when the run kept every promise) and the tally. */
export function checkInvariants(evidence: Evidence): { violations: Violation[]; tally: Tally } {
  const violations: Violation[] = [];
  const tally: Tally = {
    sent: 0,
    answeredOnce: 0,
    lost: 0,
    duplicated: 0,
    strayPlaceholders: 0,
    prompts: 0,
    promptsAnsweredOnce: 0,
  };
  const histories = evidence.requests.map((body) => userTexts(body).flatMap(tokensIn));
  evidence.conversations.forEach((plan, i) => {
    const c = plan.name;
    const mine = (t: string) => t.startsWith(`q-${c}-`);
    tally.sent += plan.sent.length;
    // The model: the newest request of this conversation holds its whole history, each message once.
    const newest = histories.findLastIndex((h) => h.some(mine));
    const history = histories[newest]?.filter(mine) ?? [];
    const order = [...new Set(history)];
    const expected = plan.sent.filter((t) => order.includes(t));
    if (order.join() !== expected.join())
      violations.push({
        conversation: c,
        rule: 'reordered',
        detail: `model saw ${order.join(' ')}; sent ${plan.sent.join(' ')}`,
      });
    // The chat: each message's answer exactly once, in order; no transient placeholder left.
    const messages = evidence.botMessages[i] ?? [];
    const shown = messages.flatMap((m) => m.text.match(/Answer to q-[a-z0-9]+-\d+\./g) ?? []);
    for (const token of plan.sent) {
      const read = history.filter((t) => t === token).length;
      const answered = shown.filter((t) => t === answerTo(token)).length;
      if (read === 0)
        violations.push({ conversation: c, rule: 'lost', detail: `${token} never reached the model` });
      if (read > 1)
        violations.push({
          conversation: c,
          rule: 'duplicated',
          detail: `${token} reached the model ${read} times`,
        });
      const excused = plan.interrupted.includes(token);
      if (answered === 0 && !excused)
        violations.push({ conversation: c, rule: 'unanswered', detail: `no answer to ${token} in the chat` });
      if (answered > 1)
        violations.push({
          conversation: c,
          rule: 'answered-twice',
          detail: `answer to ${token} shown ${answered} times`,
        });
      if (read > 1 || answered > 1) tally.duplicated++;
      else if (read === 0 || (answered === 0 && !excused)) tally.lost++;
      else if (answered === 1) tally.answeredOnce++; // an excused turn without its answer counts as neither
    }
    const foreign = shown.filter((s) => !plan.sent.some((t) => s === answerTo(t)));
    if (foreign.length > 0)
      violations.push({
        conversation: c,
        rule: 'answered-twice',
        detail: `answers that belong elsewhere: ${foreign.join(' ')}`,
      });
    // Where an answer lands (its placeholder, or a new message when that was lost) may differ from
    // the order of the questions: only the model's reading order is a promise.
    for (const m of messages)
      if (TRANSIENT.includes(m.text)) {
        tally.strayPlaceholders++;
        violations.push({
          conversation: c,
          rule: 'placeholder',
          detail: `message ${m.messageId} still says "${m.text}"`,
        });
      }
    for (const id of evidence.pinned[i] ?? [])
      violations.push({ conversation: c, rule: 'pin', detail: `message ${id} left pinned` });
    for (const m of messages)
      if (OPEN_CARD.test(m.text))
        violations.push({
          conversation: c,
          rule: 'card',
          detail: `card ${m.messageId} left open ("${m.text.split('\n')[0]}")`,
        });
    checkPrompts(
      plan,
      messages,
      toolCalls(evidence.requests[newest]),
      evidence.toolRuns ?? [],
      violations,
      tally,
    );
  });
  for (const p of evidence.promptAnswers ?? [])
    if (p.answers !== 1)
      violations.push({ rule: 'prompt', detail: `callback ${p.id} answered ${p.answers} times` });
  for (const secret of evidence.secrets)
    if (evidence.logs.includes(secret))
      violations.push({ rule: 'log', detail: 'a log line carries the bot token' });
  for (const plan of evidence.conversations)
    for (const token of plan.sent)
      if (evidence.logs.includes(question(token)) || evidence.logs.includes(answerTo(token)))
        violations.push({
          conversation: plan.name,
          rule: 'log',
          detail: `a log line carries the text of ${token}`,
        });
  return { violations, tally };
}

/**
 * Every prompt answered once, in one conversation: no prompt message keeps live buttons; each prompted
 * token's prompt was shown in one message, the model called its tool once and got one result that is
 * not an error (the user's answer, not a denial or a cancellation), and an allowed tool ran once.
 * `calls` are the tool calls in the conversation's newest request (its whole history).
 */
function checkPrompts(
  plan: ConversationPlan,
  messages: readonly Pick<SandboxMessage, 'messageId' | 'text' | 'replyMarkup'>[],
  calls: readonly ToolCall[],
  runs: readonly string[],
  violations: Violation[],
  tally: Tally,
): void {
  const c = plan.name;
  const prompts = messages.filter((m) => PROMPT_MARK.test(m.text));
  tally.prompts += prompts.length;
  for (const m of prompts)
    if (live(m))
      violations.push({
        conversation: c,
        rule: 'prompt',
        detail: `prompt message ${m.messageId} left with live buttons`,
      });
  for (const token of plan.prompted ?? []) {
    const problems: string[] = [];
    const shown = prompts.filter((m) => tokensIn(m.text).includes(token)).length;
    if (shown !== 1) problems.push(`its prompt shown ${shown} times`);
    const mine = calls.filter((call) => tokensIn(call.input).includes(token));
    if (mine.length !== 1) problems.push(`the model called its tool ${mine.length} times`);
    for (const call of mine) {
      const ok = call.results.filter((r) => !r.isError).length;
      if (call.results.length !== 1 || ok !== 1)
        problems.push(
          `${call.name} got ${call.results.length} results (${call.results.length - ok} errors) for the user's one answer`,
        );
      if (call.name !== 'AskUserQuestion') {
        const ran = runs.filter((line) => line === token).length;
        if (ran !== 1) problems.push(`${call.name} ran ${ran} times`);
      }
    }
    if (problems.length === 0) tally.promptsAnsweredOnce++;
    else violations.push({ conversation: c, rule: 'prompt', detail: `${token}: ${problems.join('; ')}` });
  }
}

/** Reads a running system into {@link Evidence} for `conversations`. */
export function collectEvidence(
  system: System,
  conversations: readonly ConversationPlan[],
  extra: Pick<Evidence, 'promptAnswers' | 'toolRuns'> = {},
): Evidence {
  const { telegram, model } = system;
  const inPlace = (plan: ConversationPlan, m: SandboxMessage) =>
    m.from === 'bot' && m.kind !== 'service' && (plan.threadId === undefined || m.threadId === plan.threadId);
  return {
    conversations,
    botMessages: conversations.map((plan) =>
      telegram
        .messages(plan.chatId)
        .filter((m) => inPlace(plan, m))
        .map((m) => ({
          messageId: m.messageId,
          text: m.text,
          ...(m.replyMarkup ? { replyMarkup: m.replyMarkup } : {}),
        })),
    ),
    pinned: conversations.map((plan) => telegram.chat(plan.chatId).pinned.map((m) => m.messageId)),
    requests: model
      .messageRequests()
      .filter((r: RecordedRequest) => r.view?.kind === 'main')
      .map((r) => r.body),
    logs: system.logs(),
    secrets: [system.token, system.token.split(':')[1] ?? system.token],
    ...extra,
  };
}

/** The violations as lines, for a failure message. */
export const describeViolations = (violations: readonly Violation[]): string =>
  violations.map((v) => `${v.rule}${v.conversation ? ` [${v.conversation}]` : ''}: ${v.detail}`).join('\n');
