/**
 * The fault harness: conversations that ask uniquely tokened questions, a script that answers each token
 * (slowly, with API errors, or hanging, as a case asks), event-driven waits, and the final judgement with
 * the invariant checker. Used by the fault matrix and the soak; one {@link FaultWorld} per system.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ask,
  bash,
  type CallbackQueryRecord,
  type Rule,
  rule,
  type SandboxMessage,
  type StepSource,
  say,
  type WireUser,
} from '@switchyard/sandbox';
import { type System, type SystemOptions, startSystem } from '../system.js';
import {
  answerTo,
  type ConversationPlan,
  checkInvariants,
  collectEvidence,
  question,
  tokensIn,
  type Violation,
} from './invariants.js';

/** The bot's username, which group messages must mention. */
export const BOT = '@switchyard_sandbox_bot';
/** The file, in the working directory, that an allowed prompted tool appends its token to. */
const RUN_LOG = 'prompted-runs.log';
/** Filler that makes an answer stream for a while (no token in it). */
const filler = (lines = 12) =>
  Array.from({ length: lines }, (_, i) => `Line ${i + 1} of the answer, streamed slowly.`).join('\n');

/** A conversation of the world: a private chat or a forum topic. */
export interface Conversation extends ConversationPlan {
  /** Sends the next question; returns its token. */
  ask(): string;
}

/** How the model answers one token. */
export type Behaviour =
  /** A short answer at the default pace. */
  | 'short'
  /** A long answer streamed slowly (several seconds): the window for mid-stream faults. */
  | 'long'
  /** Steps before the answer (API errors, a hang), then the long answer. */
  | { before: StepSource[]; long?: boolean; lines?: number }
  /**
   * The turn asks the user first, then gives the short answer: `permission`, Bash appending the token to
   * the run log (a permission prompt); or `question`, an `AskUserQuestion` whose question is the token
   * followed by `padding` characters, with two options.
   */
  | { prompt: 'permission' }
  | { prompt: 'question'; padding?: number };

/** Options of a scripted `AskUserQuestion`. */
export const QUESTION_OPTIONS = ['Yes', 'No'] as const;

/** A system with conversations and a script answering their tokens. */
export interface FaultWorld {
  system: System;
  /** The conversations, in the order asked for. */
  conversations: Conversation[];
  /** Makes `token` (asked later) answered as told; the default is 'short'. */
  script(token: string, behaviour: Behaviour): void;
  /** The next token `conversation.ask()` will return. */
  nextToken(conversation: Conversation): string;
  /** The text the chat shows once `token` is answered (the whole final text). */
  finalText(token: string): string;
  /** Resolves when `token`'s final answer is shown in its conversation. */
  answered(conversation: Conversation, token: string, timeoutMs?: number): Promise<void>;
  /**
   * Resolves when the bot's text in the conversation includes `text` (e.g. a streamed line): a message's,
   * or in a private chat the newest draft's (the rich path streams there).
   */
  shows(conversation: Conversation, text: string, timeoutMs?: number): Promise<void>;
  /** Resolves with `token`'s prompt message once it shows live buttons. */
  prompt(conversation: Conversation, token: string, timeoutMs?: number): Promise<SandboxMessage>;
  /**
   * Presses a button (by its text) on a prompt message, as the user; the press is judged too (it must be
   * answered). `force` presses a stale keyboard's button (by its data) as a client showing it would.
   */
  press(
    conversation: Conversation,
    messageId: number,
    text: string,
    options?: { force?: boolean },
  ): CallbackQueryRecord;
  /**
   * Resolves once the gateway has the bridge: until then a private chat's message gets a "queued"
   * placeholder message, which a rich reply grows from, rather than drafts.
   */
  connected(timeoutMs?: number): Promise<void>;
  /** Resolves when every conversation is settled: no transient placeholder, no pin, every token answered. */
  settled(timeoutMs?: number): Promise<void>;
  /**
   * Writes what a failure needs to be understood to a file under the OS temp directory and returns its
   * path: every conversation's bot messages (id, keyboard, text), the Bot API calls and the services' logs,
   * with the caller's own `sections` (lines) before the logs.
   */
  dump(label: string, sections?: string[]): string;
  /** The invariant checker's verdict over everything so far. */
  verdict(): { violations: Violation[]; tally: ReturnType<typeof checkInvariants>['tally'] };
  stop(): Promise<void>;
}

/** What a world is made of. */
export interface WorldOptions {
  /** Private chats, each with its own allowed user. */
  privateChats: number;
  /** Forum topics (in one forum, or each in a forum of its own with `forumPerTopic`). */
  topics: number;
  /** Groups share Telegram's 20-messages-a-minute limit: load tests give each topic its own forum. */
  forumPerTopic?: boolean;
  /** Config over the defaults (`maxLiveSessions`, card…). */
  agent?: Record<string, unknown>;
  card?: SystemOptions['card'];
  echoLogs?: boolean;
}

const NAMES = 'abcdefghijklmnopqrstuvwxyz';

/** The model's steps before `token`'s answer: API errors or a hang, or the tool call that prompts. */
function stepsBefore(token: string, b: Behaviour): StepSource[] {
  if (typeof b !== 'object') return [];
  if (!('prompt' in b)) return b.before;
  if (b.prompt === 'permission') return [bash(`echo ${token} >> ${RUN_LOG}`, `Note ${token}`)];
  const question = `Shall I go on with ${token}? ${'Some context for the question. '.repeat(200)}`;
  return [
    ask({
      question: question.slice(0, token.length + 20 + (b.padding ?? 0)),
      header: 'Go on',
      options: QUESTION_OPTIONS.map((label) => ({ label, description: `${label}, for ${token}` })),
    }),
  ];
}

/** Starts a system with the conversations asked for, both services running. */
export async function startWorld(options: WorldOptions): Promise<FaultWorld> {
  const behaviours = new Map<string, Behaviour>();
  const users: WireUser[] = [];
  /** Callback queries pressed through {@link FaultWorld.press}. */
  const presses: string[] = [];
  /** Tokens the script has answered: a turn's answer covers every earlier message not yet answered. */
  const answered = new Set<string>();
  /** The final text for `token`, preceded by the answers still due to earlier messages (read as steers). */
  const answerUpTo = (token: string): string => {
    const conversation = conversations.find((c) => c.sent.includes(token));
    const sent = conversation?.sent ?? [token];
    const due = sent.slice(0, sent.indexOf(token) + 1).filter((t) => !answered.has(t));
    for (const t of due) answered.add(t);
    return (due.length > 0 ? due : [token]).map(finalText).join('\n');
  };
  const rules = (): Rule[] => [
    ...[...behaviours].map(([token, b]) =>
      rule(new RegExp(`\\b${token}\\b(?![\\s\\S]*\\bq-[a-z0-9]+-\\d+\\b)`), ...stepsBefore(token, b), () =>
        say(answerUpTo(token), slow(b)),
      ),
    ),
    // Default: the newest message of the text and every earlier one not answered yet.
    rule(/\bq-[a-z0-9]+-\d+\b/, (ctx) => say(answerUpTo(tokensIn(ctx.userText).at(-1) ?? ''))),
  ];
  const finalText = (token: string): string => {
    const b = behaviours.get(token) ?? 'short';
    if (b === 'short' || (typeof b === 'object' && ('prompt' in b || b.long === false)))
      return answerTo(token);
    return `${answerTo(token)}\n${filler(typeof b === 'object' ? b.lines : undefined)}`;
  };
  const slow = (b: Behaviour) =>
    b === 'short' || (typeof b === 'object' && 'prompt' in b) ? {} : { chunkSize: 10, chunkDelayMs: 60 };
  const system = await startSystem({
    rules: rules(),
    chunkSize: 8,
    chunkDelayMs: 15,
    card: options.card ?? { showDelayMs: 60_000 },
    ...(options.echoLogs ? { echoLogs: true } : {}),
    agent: (telegram) => {
      for (let i = 0; i < options.privateChats; i++)
        users.push(i === 0 ? telegram.defaultUser : telegram.addUser({ firstName: `User${i}` }));
      // The classic reply path (placeholder, edits, HTML) unless the world asks for `replies: 'rich'`.
      return { allow: users.map((u) => u.id), replies: 'classic', ...options.agent };
    },
  });
  const { telegram } = system;
  const conversations: Conversation[] = [];
  const counters = new Map<string, number>();
  const make = (name: string, chatId: number, threadId?: number): Conversation => {
    const conversation: Conversation = {
      name,
      chatId,
      ...(threadId !== undefined ? { threadId } : {}),
      sent: [],
      interrupted: [],
      prompted: [],
      ask() {
        const token = nextToken(conversation);
        counters.set(name, (counters.get(name) ?? 0) + 1);
        conversation.sent.push(token);
        const text = threadId === undefined ? question(token) : `${BOT} ${question(token)}`;
        telegram.sendText(chatId, text, threadId === undefined ? {} : { threadId });
        return token;
      },
    };
    return conversation;
  };
  const nextToken = (c: Conversation) => `q-${c.name}-${(counters.get(c.name) ?? 0) + 1}`;
  users.forEach((user, i) => {
    conversations.push(make(NAMES[i] ?? `p${i}`, telegram.privateChat(user).id));
  });
  const names = Array.from({ length: options.topics }, (_, i) => `topic ${i}`);
  const forums = options.forumPerTopic ? names.map((n) => [n]) : names.length > 0 ? [names] : [];
  let topicIndex = 0;
  for (const topics of forums) {
    const forum = telegram.createGroup({ title: 'projects', supergroup: true, forum: true, topics });
    for (const topic of forum.topics) {
      conversations.push(make(`t${NAMES[topicIndex] ?? topicIndex}`, forum.id, topic.threadId));
      topicIndex++;
    }
  }
  const messages = (c: Conversation): SandboxMessage[] =>
    telegram
      .messages(c.chatId)
      .filter(
        (m) =>
          m.from === 'bot' && m.kind !== 'service' && (c.threadId === undefined || m.threadId === c.threadId),
      );
  const texts = (c: Conversation): string[] => messages(c).map((m) => m.text);
  const draft = (c: Conversation): string =>
    c.threadId === undefined ? (telegram.chat(c.chatId).drafts.at(-1)?.text ?? '') : '';
  const runLog = path.join(system.dir, 'work', RUN_LOG);
  /** Waits for `check` as `telegram.waitFor` does; on a timeout, dumps the evidence and says where. */
  const evidenced = <T>(
    label: string,
    what: string,
    timeoutMs: number,
    check: () => T | undefined | null | false,
  ): Promise<T> =>
    telegram.waitFor(check, { timeoutMs }).catch((error: unknown) => {
      throw new Error(`${what}: not within ${timeoutMs} ms (see ${dump(label)}): ${String(error)}`);
    });
  const dump = (label: string, sections: string[] = []): string => {
    const file = path.join(tmpdir(), `switchyard-${label.replace(/[^\w.-]+/g, '-')}-${Date.now()}.txt`);
    const start = telegram.calls()[0]?.at ?? 0;
    const seconds = (at: number) => ((at - start) / 1000).toFixed(2);
    const oneLine = (text: string) => text.slice(0, 200).replace(/\n/g, '⏎');
    const chats = conversations.map((c) => {
      // Every bot message, deleted ones too, with each version it had and when (seconds from the first call):
      // an answer overwritten by a later edit, or deleted, is still there to see.
      const all = telegram
        .messages(c.chatId, { includeDeleted: true })
        .filter(
          (m) =>
            m.from === 'bot' &&
            m.kind !== 'service' &&
            (c.threadId === undefined || m.threadId === c.threadId),
        );
      const lines = all.flatMap((m) => {
        const buttons = m.replyMarkup?.inline_keyboard.flat().length ?? 0;
        const head = `  #${m.messageId}${m.deleted ? ` (deleted at ${seconds(m.deletedAt ?? 0)})` : ''}${buttons > 0 ? ` [${buttons} buttons]` : ''} ${oneLine(m.text)}`;
        const versions =
          m.history.length > 1 ? m.history.map((v) => `      @${seconds(v.at)} ${oneLine(v.text)}`) : [];
        return [head, ...versions];
      });
      return [
        `${c.name} (chat ${c.chatId}${c.threadId === undefined ? '' : `, topic ${c.threadId}`}) sent ${c.sent.join(' ')}`,
        ...lines,
      ].join('\n');
    });
    const calls = telegram
      .calls()
      .filter((call) => call.method !== 'getUpdates')
      .map(
        (call) =>
          `${seconds(call.at)} ${call.method} ${call.chatId ?? ''} ${call.ok ? 'ok' : `${call.errorCode} ${call.description ?? ''}`}`,
      );
    // What the model was asked and said: the tokens of the newest user text, and the answer's text.
    const model = system.model.messageRequests().map((r) => {
      const asked = tokensIn(r.view?.userText ?? '').join(' ');
      const a = r.answer;
      const said =
        a === undefined
          ? 'pending'
          : a.type === 'reply'
            ? `${a.completed ? '' : '(cut) '}${a.blocks
                .map((b) => ('text' in b ? String(b.text) : b.type))
                .join(' ')
                .slice(0, 160)
                .replace(/\n/g, '⏎')}`
            : a.type === 'error'
              ? `error ${a.status}`
              : a.type;
      return `${r.index} @${seconds(r.at)} [${r.view?.kind ?? '?'}] ${asked} → ${said}`;
    });
    writeFileSync(
      file,
      [
        ...chats,
        '',
        '== calls',
        ...calls,
        '',
        '== model',
        ...model,
        '',
        ...sections,
        '',
        '== logs',
        system.logs(),
      ].join('\n'),
    );
    return file;
  };
  const evidence = () =>
    collectEvidence(system, conversations, {
      promptAnswers: presses.map((id) => ({ id, answers: telegram.callbackQuery(id)?.answer ? 1 : 0 })),
      toolRuns: existsSync(runLog) ? readFileSync(runLog, 'utf8').split('\n').filter(Boolean) : [],
    });
  system.start('gateway');
  system.start('bridge');
  return {
    system,
    conversations,
    nextToken,
    finalText,
    script(token, behaviour) {
      behaviours.set(token, behaviour);
      if (typeof behaviour === 'object' && 'prompt' in behaviour)
        conversations.find((c) => token.startsWith(`q-${c.name}-`))?.prompted?.push(token);
      system.model.setScript(rules());
    },
    async answered(c, token, timeoutMs = 90_000) {
      const want = finalText(token);
      await evidenced(`unanswered-${token}`, `${token} answered`, timeoutMs, () =>
        texts(c).some((t) => t.includes(want)),
      );
    },
    async shows(c, text, timeoutMs = 60_000) {
      await evidenced(`not-shown-${c.name}`, `"${text}" shown in ${c.name}`, timeoutMs, () =>
        [...texts(c), draft(c)].some((t) => t.includes(text)),
      );
    },
    async connected(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!/"event":"bridge_connection","connected":true/.test(system.logs())) {
        if (Date.now() > deadline) throw new Error('the bridge never connected to the gateway');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    prompt: (c, token, timeoutMs = 60_000) =>
      evidenced(`no-prompt-${token}`, `${token}'s prompt with live buttons`, timeoutMs, () =>
        messages(c).find(
          (m) =>
            /^(🔐|❓)/u.test(m.text) &&
            m.text.includes(token) &&
            (m.replyMarkup?.inline_keyboard.length ?? 0) > 0,
        ),
      ),
    press(c, messageId, text, options = {}) {
      const message = telegram.message(c.chatId, messageId);
      const data = message?.replyMarkup?.inline_keyboard.flat().find((b) => b.text === text)?.callback_data;
      const query = telegram.pressButton(
        c.chatId,
        messageId,
        options.force && data !== undefined ? { data } : { text },
        options.force ? { force: true } : {},
      );
      presses.push(query.id);
      return query;
    },
    async settled(timeoutMs = 120_000) {
      await telegram
        .waitFor(
          () => {
            const { violations } = checkInvariants(evidence());
            return violations.every((v) => v.rule === 'log') || undefined;
          },
          { timeoutMs },
        )
        .catch(() => undefined); // the verdict reports what is still wrong
    },
    dump,
    verdict: () => checkInvariants(evidence()),
    stop: () => system.stop(),
  };
}
