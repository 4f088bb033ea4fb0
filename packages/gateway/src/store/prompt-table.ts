/**
 * The `prompts` table: every inline-keyboard prompt (a permission request or an `AskUserQuestion`) with
 * what a press needs to be answered after a restart — the request, the keyboard's message, the options
 * toggled and the questions answered so far.
 *
 * Invariant: a prompt leaves `open` once ({@link PromptTable.closePrompt} is a compare-and-set), which is
 * what makes a double press send one answer (prompts.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Route } from '@switchyard/protocol';
import type { PromptState } from '../core/prompts/prompt-press.js';
import { type Db, storedRoute } from './database.js';

/**
 * An inline-keyboard prompt; `token` is what goes into `callback_data`, the rest stays here. The shape is
 * the prompt core's (`core/prompts/prompt-press.ts`), which decides what a press on it means.
 */
export type PromptRow = PromptState;

/** The prompts. */
export interface PromptTable {
  addPrompt(prompt: Omit<PromptRow, 'token' | 'state' | 'selection' | 'answers' | 'messageId'>): PromptRow;
  getPromptByToken(token: string): PromptRow | undefined;
  getPromptByRequest(requestId: string): PromptRow | undefined;
  setPromptMessage(token: string, messageId: number): void;
  setPromptSelection(token: string, selection: Record<string, number[]>): void;
  /** Records the answers given so far to an open multi-question prompt. */
  setPromptAnswers(token: string, answers: Record<string, string>): void;
  /** Moves an open prompt to `state`; false when it was not open (answered twice, or gone). */
  closePrompt(token: string, state: 'answered' | 'closed'): boolean;
  openPrompts(route?: Route): PromptRow[];
}

/** The prompt table over `db`. */
export function createPromptTable(db: Db, now: () => number): PromptTable {
  const q = {
    addPrompt: db.prepare(
      `INSERT INTO prompts (token, request_id, kind, chat_id, thread_id, payload, state, created_at)
       VALUES (?, ?, ?, ?, ?, ?, 'open', ?)`,
    ),
    promptByToken: db.prepare<[string], PromptSql>('SELECT * FROM prompts WHERE token = ?'),
    promptByRequest: db.prepare<[string], PromptSql>('SELECT * FROM prompts WHERE request_id = ?'),
    setPromptMessage: db.prepare('UPDATE prompts SET message_id = ? WHERE token = ?'),
    setPromptSelection: db.prepare('UPDATE prompts SET selection = ? WHERE token = ?'),
    setPromptAnswers: db.prepare("UPDATE prompts SET answers = ? WHERE token = ? AND state = 'open'"),
    closePrompt: db.prepare("UPDATE prompts SET state = ? WHERE token = ? AND state = 'open'"),
    openPrompts: db.prepare<[], PromptSql>("SELECT * FROM prompts WHERE state = 'open' ORDER BY created_at"),
  };

  return {
    addPrompt: (p) => {
      const token = randomUUID().replaceAll('-', '').slice(0, 16);
      q.addPrompt.run(
        token,
        p.requestId,
        p.kind,
        p.route.chatId,
        p.route.threadId ?? null,
        JSON.stringify(p.payload),
        now(),
      );
      return toPrompt(q.promptByToken.get(token)) as PromptRow;
    },
    getPromptByToken: (token) => toPrompt(q.promptByToken.get(token)),
    getPromptByRequest: (requestId) => toPrompt(q.promptByRequest.get(requestId)),
    setPromptMessage: (token, messageId) => {
      q.setPromptMessage.run(messageId, token);
    },
    setPromptSelection: (token, selection) => {
      q.setPromptSelection.run(JSON.stringify(selection), token);
    },
    setPromptAnswers: (token, answers) => {
      q.setPromptAnswers.run(JSON.stringify(answers), token);
    },
    closePrompt: (token, state) => q.closePrompt.run(state, token).changes > 0,
    openPrompts: (route) =>
      q.openPrompts
        .all()
        .map((r) => toPrompt(r) as PromptRow)
        .filter((p) => !route || (p.route.chatId === route.chatId && p.route.threadId === route.threadId)),
  };
}

interface PromptSql {
  token: string;
  request_id: string;
  kind: PromptRow['kind'];
  chat_id: number;
  thread_id: number | null;
  message_id: number | null;
  payload: string;
  selection: string;
  answers: string;
  state: PromptRow['state'];
}

function toPrompt(r: PromptSql | undefined): PromptRow | undefined {
  if (!r) return undefined;
  return {
    token: r.token,
    requestId: r.request_id,
    kind: r.kind,
    route: storedRoute(r.chat_id, r.thread_id),
    messageId: r.message_id ?? undefined,
    payload: JSON.parse(r.payload) as unknown,
    selection: JSON.parse(r.selection) as Record<string, number[]>,
    answers: JSON.parse(r.answers) as Record<string, string>,
    state: r.state,
  };
}
