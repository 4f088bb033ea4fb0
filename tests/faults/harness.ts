/**
 * The fault harness: conversations that ask uniquely tokened questions, a script that answers each token
 * (slowly, with API errors, or hanging, as a case asks), event-driven waits, and the final judgement with
 * the invariant checker. Used by the fault matrix and the soak; one {@link FaultWorld} per system.
 */
import { type Rule, rule, type StepSource, say, type WireUser } from '@switchyard/sandbox';
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
  | { before: StepSource[]; long?: boolean; lines?: number };

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
  /** Resolves when the bot's text in the conversation includes `text` (e.g. a streamed line). */
  shows(conversation: Conversation, text: string, timeoutMs?: number): Promise<void>;
  /** Resolves when every conversation is settled: no transient placeholder, no pin, every token answered. */
  settled(timeoutMs?: number): Promise<void>;
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

/** Starts a system with the conversations asked for, both services running. */
export async function startWorld(options: WorldOptions): Promise<FaultWorld> {
  const behaviours = new Map<string, Behaviour>();
  const users: WireUser[] = [];
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
      rule(
        new RegExp(`\\b${token}\\b(?![\\s\\S]*\\bq-[a-z0-9]+-\\d+\\b)`),
        ...(typeof b === 'object' ? b.before : []),
        () => say(answerUpTo(token), slow(b)),
      ),
    ),
    // Default: the newest message of the text and every earlier one not answered yet.
    rule(/\bq-[a-z0-9]+-\d+\b/, (ctx) => say(answerUpTo(tokensIn(ctx.userText).at(-1) ?? ''))),
  ];
  const finalText = (token: string): string => {
    const b = behaviours.get(token) ?? 'short';
    if (b === 'short' || (typeof b === 'object' && b.long === false)) return answerTo(token);
    return `${answerTo(token)}\n${filler(typeof b === 'object' ? b.lines : undefined)}`;
  };
  const slow = (b: Behaviour) => (b === 'short' ? {} : { chunkSize: 10, chunkDelayMs: 60 });
  const system = await startSystem({
    rules: rules(),
    chunkSize: 8,
    chunkDelayMs: 15,
    card: options.card ?? { showDelayMs: 60_000 },
    ...(options.echoLogs ? { echoLogs: true } : {}),
    agent: (telegram) => {
      for (let i = 0; i < options.privateChats; i++)
        users.push(i === 0 ? telegram.defaultUser : telegram.addUser({ firstName: `User${i}` }));
      // The classic reply path (placeholder, edits, HTML): what this matrix and its checker were built
      // on. Rich replies' own loss and duplicate cases are tested in the gateway (rich-reply.test.ts)
      // and tests/rich-replies; running this matrix over them is still to do.
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
  const texts = (c: Conversation): string[] =>
    telegram
      .messages(c.chatId)
      .filter(
        (m) =>
          m.from === 'bot' && m.kind !== 'service' && (c.threadId === undefined || m.threadId === c.threadId),
      )
      .map((m) => m.text);
  const evidence = () => collectEvidence(system, conversations);
  system.start('gateway');
  system.start('bridge');
  return {
    system,
    conversations,
    nextToken,
    finalText,
    script(token, behaviour) {
      behaviours.set(token, behaviour);
      system.model.setScript(rules());
    },
    async answered(c, token, timeoutMs = 90_000) {
      const want = finalText(token);
      await telegram.waitFor(() => texts(c).some((t) => t.includes(want)), { timeoutMs });
    },
    async shows(c, text, timeoutMs = 60_000) {
      await telegram.waitFor(() => texts(c).some((t) => t.includes(text)), { timeoutMs });
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
    verdict: () => checkInvariants(evidence()),
    stop: () => system.stop(),
  };
}
