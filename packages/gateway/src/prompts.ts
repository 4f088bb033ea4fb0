/**
 * Open prompts — permission requests and questions — from the bridge's frame to the user's answer.
 * Each prompt is a row in SQLite keyed by a short token; its message carries the keyboard. A button
 * press closes the row atomically before the answer is sent, so a double press answers once. A press on
 * a prompt that is no longer open is told "this request has expired". Every callback is answered.
 */
import type { FrameOf, GatewayToBridge, Logger, Route } from '@switchyard/protocol';
import type { CallbackQuery } from 'grammy/types';
import { type BotApi, errorText } from './bot-api.js';
import type { Courier } from './courier.js';
import {
  type ButtonPress,
  decodePress,
  permissionAnswered,
  permissionPrompt,
  questionPrompt,
} from './keyboards.js';
import { escapeHtml } from './markdown.js';
import type { GatewayStore, PromptRow } from './store.js';

/** Said to a press whose prompt is gone. */
export const EXPIRED = 'This request has expired.';

/** What the prompt handler needs. */
export interface PromptsOptions {
  api: Pick<BotApi, 'sendMessage' | 'editMessageText' | 'answerCallbackQuery'>;
  courier: Courier;
  store: GatewayStore;
  logger: Logger;
  /** Hands an answer to the bridge (reliable; durable when it returns). */
  send(frame: GatewayToBridge): Promise<void>;
}

/** The prompt handler's handle. */
export interface Prompts {
  frame(frame: FrameOf<'permission_request' | 'question' | 'prompt_closed'>): void;
  /** Handles a button press; always answers the callback. */
  press(query: CallbackQuery): Promise<void>;
  /** Takes a typed message as the free-text answer to an open question in `route`; false if none. */
  typedAnswer(route: Route, text: string): Promise<boolean>;
  /** Open prompts, for `/status`. */
  open(): number;
}

type QuestionFrame = FrameOf<'question'>;
type PermissionFrame = FrameOf<'permission_request'>;

/** Creates the prompt handler. */
export function createPrompts(options: PromptsOptions): Prompts {
  const { api, courier, store, logger } = options;
  const answers = new Map<string, Record<string, string>>();

  const thread = (r: Route) => (r.threadId === undefined ? {} : { message_thread_id: r.threadId });

  const show = (row: PromptRow, html: string, keyboard?: { inline_keyboard: [] | unknown[] }): void => {
    if (row.messageId === undefined) return;
    const messageId = row.messageId;
    void courier
      .call(row.route.chatId, () =>
        api.editMessageText(row.route.chatId, messageId, html, {
          parse_mode: 'HTML',
          reply_markup: (keyboard ?? { inline_keyboard: [] }) as { inline_keyboard: [] },
        }),
      )
      .catch((error: unknown) => logger.warn({ event: 'prompt_edit_failed', error: errorText(error) }));
  };

  const answerQuestion = async (
    row: PromptRow,
    frame: QuestionFrame,
    collected: Record<string, string>,
  ): Promise<void> => {
    if (!frame.questions.every((q) => collected[q.question] !== undefined)) {
      answers.set(row.token, collected);
      const view = questionPrompt(frame, row.token, row.selection, collected);
      show(row, view.html, view.keyboard);
      return;
    }
    if (!store.closePrompt(row.token, 'answered')) return;
    answers.delete(row.token);
    await options.send({ type: 'question_answer', requestId: row.requestId, answers: collected });
    show(
      row,
      questionPrompt(frame, row.token, row.selection, collected).html.replace(
        '\n<i>Or type your own answer.</i>',
        '',
      ),
    );
  };

  return {
    frame(frame) {
      if (frame.type === 'prompt_closed') {
        const row = store.getPromptByRequest(frame.requestId);
        if (row && store.closePrompt(row.token, 'closed')) {
          const why =
            frame.reason === 'answered' ? 'answered' : frame.reason === 'cancelled' ? 'cancelled' : 'expired';
          const payload = row.payload as PermissionFrame | QuestionFrame;
          const title =
            payload.type === 'permission_request' ? `🔐 ${escapeHtml(payload.toolName)}` : '❓ Question';
          show(row, `${title} — <i>${why}</i>`);
        }
        return;
      }
      if (store.getPromptByRequest(frame.requestId)) return; // resent after a reconnect: already shown
      const row = store.addPrompt({
        requestId: frame.requestId,
        kind: frame.type === 'question' ? 'question' : 'permission',
        route: frame.route,
        payload: frame,
      });
      const view =
        frame.type === 'question'
          ? questionPrompt(frame, row.token, {}, {})
          : permissionPrompt(frame, row.token);
      void courier
        .call(
          frame.route.chatId,
          () =>
            api.sendMessage(frame.route.chatId, view.html, {
              ...thread(frame.route),
              parse_mode: 'HTML',
              reply_markup: view.keyboard,
            }),
          { priority: 'urgent' },
        )
        .then((sent) => {
          if (sent) store.setPromptMessage(row.token, sent.message_id);
        })
        .catch((error: unknown) =>
          logger.error({ event: 'prompt_send_failed', error: errorText(error) }, 'prompt not shown'),
        );
    },

    async press(query) {
      const reply = (text?: string) =>
        api.answerCallbackQuery(query.id, text ? { text } : {}).catch((error: unknown) => {
          logger.warn({ event: 'callback_answer_failed', error: errorText(error) });
        });
      const press: ButtonPress | undefined = decodePress(query.data);
      const row = press ? store.getPromptByToken(press.token) : undefined;
      if (!press || !row || row.state !== 'open') {
        await reply(EXPIRED);
        return;
      }
      if (press.kind === 'permission') {
        if (row.kind !== 'permission' || !store.closePrompt(row.token, 'answered')) {
          await reply(EXPIRED);
          return;
        }
        await options.send({
          type: 'permission_answer',
          requestId: row.requestId,
          decision: press.decision,
          ...(press.decision === 'deny' ? { message: 'The user denied this.' } : {}),
        });
        await reply(press.decision === 'deny' ? 'Denied' : 'Allowed');
        show(
          { ...row, messageId: row.messageId ?? query.message?.message_id },
          permissionAnswered(row.payload as PermissionFrame, press),
        );
        return;
      }
      const frame = row.payload as QuestionFrame;
      const q = frame.questions[press.question];
      if (row.kind !== 'question' || !q) {
        await reply(EXPIRED);
        return;
      }
      const collected = { ...(answers.get(row.token) ?? {}) };
      const selection = { ...row.selection };
      const key = String(press.question);
      if (press.kind === 'option') {
        const option = q.options[press.option];
        if (!option) {
          await reply(EXPIRED);
          return;
        }
        if (q.multiSelect) {
          const chosen = new Set(selection[key] ?? []);
          if (chosen.has(press.option)) chosen.delete(press.option);
          else chosen.add(press.option);
          selection[key] = [...chosen].sort((a, b) => a - b);
          store.setPromptSelection(row.token, selection);
          await reply();
          const view = questionPrompt(frame, row.token, selection, collected);
          show({ ...row, selection }, view.html, view.keyboard);
          return;
        }
        collected[q.question] = option.label;
      } else {
        collected[q.question] = (selection[key] ?? [])
          .map((i) => q.options[i]?.label ?? '')
          .filter(Boolean)
          .join(', ');
      }
      await reply();
      await answerQuestion({ ...row, selection }, frame, collected);
    },

    async typedAnswer(route, text) {
      const row = store.openPrompts(route).find((p) => p.kind === 'question');
      if (!row) return false;
      const frame = row.payload as QuestionFrame;
      const collected = { ...(answers.get(row.token) ?? {}) };
      const next = frame.questions.find((q) => collected[q.question] === undefined);
      if (!next) return false;
      collected[next.question] = text;
      await answerQuestion(row, frame, collected);
      return true;
    },

    open() {
      return store.openPrompts().length;
    },
  };
}
