/**
 * Open prompts — permission requests and questions — from the bridge's frame to the user's answer.
 * Each prompt is a row in SQLite keyed by a short token; its message carries the keyboard. A press on
 * a prompt that is no longer open is told "this request has expired". Every callback is answered.
 *
 * Crash safety: the row moving `open → answered` and the answer frame entering the channel's outbox are
 * one SQLite transaction ({@link GatewayStore.atomically}; the channel appends a reliable frame
 * synchronously inside `send`). So a `kill -9` leaves either an open prompt with no answer queued (the
 * user can press again) or an answered one whose answer the channel will deliver — never an answered
 * prompt whose answer is lost — and a double press answers once. The answers to the first questions of
 * a multi-question prompt are kept in the row too, so a restart between two questions forgets nothing.
 */
import { escapeHtml } from '@switchyard/card';
import type { FrameOf, GatewayToBridge, Logger, Route } from '@switchyard/protocol';
import type { CallbackQuery, InlineKeyboardMarkup } from 'grammy/types';
import { type BotApi, errorText, isNotModified } from './bot-api.js';
import { routeOfMessage, threadParams } from './core/route.js';
import type { Courier } from './courier.js';
import {
  type ButtonPress,
  decodePress,
  permissionAnswered,
  permissionChoices,
  permissionPrompt,
  permissionTitle,
  questionPrompt,
} from './keyboards.js';
import type { SendJournal } from './send-journal.js';
import type { GatewayStore, PromptRow } from './store.js';

/** Said to a press whose prompt is gone. */
export const EXPIRED = 'This request has expired.';

/** Said to a press that did not come from the prompt's own message (another chat, topic or message). */
export const ELSEWHERE = 'This button belongs to a prompt in another chat; answer it where it was asked.';

/** Said to a press whose answer could not be queued for the bridge (the gateway is shutting down). */
export const UNDELIVERED = 'Your answer could not be passed on: the gateway is stopping.';

/** What the prompt handler needs. */
export interface PromptsOptions {
  api: Pick<BotApi, 'editMessageText' | 'editMessageReplyMarkup' | 'answerCallbackQuery'>;
  /** Sends the prompt's message as the prompt's own (see `send-journal.ts`). */
  journal: Pick<SendJournal, 'send'>;
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
/** What became of an answer: queued for the bridge, refused (the prompt was not open), or not queued. */
type Outcome = 'queued' | 'expired' | 'undelivered';
type PermissionFrame = FrameOf<'permission_request'>;

/**
 * Whether a press came from the prompt's own message: same chat, same forum topic (or none), and the same
 * message when its id is known. `callback_data` is chosen by the client, so a press carrying a prompt's
 * token from any other message is refused, even from a user allowed there.
 */
export function pressedOnPrompt(query: CallbackQuery, row: PromptRow): boolean {
  const message = query.message;
  if (!message || message.chat.id !== row.route.chatId) return false;
  if (row.messageId !== undefined && message.message_id !== row.messageId) return false;
  return routeOfMessage(message).threadId === row.route.threadId;
}

/**
 * The suggestion indexes a permission press applies, as its prompt offered them; `null` when the press
 * names a choice the prompt did not show (a forged or stale button).
 */
function appliedSuggestions(
  frame: PermissionFrame,
  press: ButtonPress & { kind: 'permission' },
): number[] | null {
  if (press.decision !== 'allow_always') return [];
  const { always, separate } = permissionChoices(frame);
  if (press.suggestion !== undefined) return separate.includes(press.suggestion) ? [press.suggestion] : null;
  return always.length > 0 ? always : null;
}

/** Creates the prompt handler. */
export function createPrompts(options: PromptsOptions): Prompts {
  const { api, courier, store, logger } = options;

  /**
   * Closes the prompt as answered and queues `frame` for the bridge in one transaction (see the module
   * comment). `expired`: the prompt was not open (answered already, or gone). `undelivered`: the frame
   * could not be queued, so the prompt stays open and the user may press again.
   */
  const answer = (token: string, frame: GatewayToBridge): Outcome => {
    let writing: Promise<void> | undefined;
    try {
      const open = store.atomically(() => {
        if (!store.closePrompt(token, 'answered')) return false;
        writing = options.send(frame);
        return true;
      });
      if (!open) return 'expired';
    } catch (error) {
      logger.error({ event: 'answer_not_queued', error: errorText(error) }, 'answer could not be queued');
      return 'undelivered';
    }
    // The frame is in the outbox, so the press need not wait for the socket: a failed write is resent
    // after the next handshake.
    void writing?.catch((error: unknown) =>
      logger.warn({ event: 'answer_write_failed', error: errorText(error) }, 'answer queued, resent later'),
    );
    return 'queued';
  };

  /**
   * Replaces the prompt message's text and keyboard (none: the buttons go). Edits of one prompt share a
   * courier key, so a burst of toggles sends only the newest state once the chat's budget allows.
   */
  const show = (row: PromptRow, html: string, keyboard?: InlineKeyboardMarkup): void => {
    const messageId = row.messageId ?? store.getPromptByToken(row.token)?.messageId;
    if (messageId === undefined) return;
    void courier
      .call(
        row.route.chatId,
        () =>
          api.editMessageText(row.route.chatId, messageId, html, {
            parse_mode: 'HTML',
            reply_markup: keyboard ?? { inline_keyboard: [] },
          }),
        { key: `prompt:${row.token}` },
      )
      .catch((error: unknown) => {
        if (isNotModified(error)) return;
        logger.warn({ event: 'prompt_edit_failed', error: errorText(error) });
        // The text was refused (too long, say): a closed prompt must still lose its buttons.
        if (keyboard === undefined)
          void courier
            .call(row.route.chatId, () =>
              api.editMessageReplyMarkup(row.route.chatId, messageId, {
                reply_markup: { inline_keyboard: [] },
              }),
            )
            .catch(() => {});
      });
  };

  /** The prompt's title line, for the closed states. */
  const title = (row: PromptRow): string => {
    const payload = row.payload as PermissionFrame | QuestionFrame;
    return payload.type === 'permission_request'
      ? permissionTitle(payload)
      : `❓ ${payload.questions.map((q) => escapeHtml(q.question)).join(' · ')}`;
  };

  const answerQuestion = (
    row: PromptRow,
    frame: QuestionFrame,
    collected: Record<string, string>,
  ): Outcome => {
    if (!frame.questions.every((q) => collected[q.question] !== undefined)) {
      store.setPromptAnswers(row.token, collected);
      const view = questionPrompt(frame, row.token, row.selection, collected);
      show(row, view.html, view.keyboard);
      return 'queued';
    }
    const outcome = answer(row.token, {
      type: 'question_answer',
      requestId: row.requestId,
      answers: collected,
    });
    if (outcome !== 'queued') return outcome;
    show(
      row,
      questionPrompt(frame, row.token, row.selection, collected).html.replace(
        '\n<i>Or type your own answer.</i>',
        '',
      ),
    );
    return 'queued';
  };

  return {
    frame(frame) {
      if (frame.type === 'prompt_closed') {
        const row = store.getPromptByRequest(frame.requestId);
        if (!row) return;
        if (store.closePrompt(row.token, 'closed')) {
          const why = frame.reason === 'answered' ? 'answered elsewhere' : 'expired';
          show(row, `${title(row)}\n⌛ <i>${why}</i>`);
        } else if (row.state === 'answered' && frame.reason !== 'answered') {
          // The user's answer went out, but the bridge no longer held the prompt (the CLI cancelled it or
          // its process was replaced): the answer reached nobody, and the message must not claim it did.
          show(row, `${title(row)}\n⌛ <i>expired before your answer reached the agent</i>`);
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
            options.journal.send(
              frame.route.chatId,
              view.html,
              { ...threadParams(frame.route), parse_mode: 'HTML', reply_markup: view.keyboard },
              {
                owner: { kind: 'prompt', token: row.token },
                adopt: (id) => store.setPromptMessage(row.token, id),
              },
            ),
          { priority: 'urgent' },
        )
        .then((sent) => {
          if (!sent) return;
          // Closed while the message was on its way: its buttons must not stay live.
          const now = store.getPromptByToken(row.token);
          if (now && now.state === 'closed') show(now, `${title(now)}\n⌛ <i>expired</i>`);
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
      const stored = press ? store.getPromptByToken(press.token) : undefined;
      if (!press || !stored || stored.state !== 'open') {
        await reply(EXPIRED);
        // A stale keyboard (the edit that removed it was lost, or the store was reset): take it away.
        const stale = query.message;
        if (stale && stored?.state !== 'open') {
          void courier
            .call(stale.chat.id, () =>
              api.editMessageReplyMarkup(stale.chat.id, stale.message_id, {
                reply_markup: { inline_keyboard: [] },
              }),
            )
            .catch(() => {});
        }
        return;
      }
      if (!pressedOnPrompt(query, stored)) {
        logger.warn(
          { event: 'press_elsewhere', chat: query.message?.chat.id },
          'press refused: not on its prompt',
        );
        await reply(ELSEWHERE);
        return;
      }
      // The message the press came from, when the send's result was not recorded yet.
      const row: PromptRow = { ...stored, messageId: stored.messageId ?? query.message?.message_id };
      if (press.kind === 'permission') {
        const apply =
          row.kind === 'permission' ? appliedSuggestions(row.payload as PermissionFrame, press) : null;
        const outcome =
          apply !== null
            ? answer(row.token, {
                type: 'permission_answer',
                requestId: row.requestId,
                decision: press.decision,
                ...(apply.length > 0 ? { suggestions: apply } : {}),
                ...(press.decision === 'deny' ? { message: 'The user denied this.' } : {}),
              })
            : 'expired';
        if (outcome === 'expired') {
          await reply(EXPIRED);
          return;
        }
        if (outcome === 'undelivered') {
          await reply(UNDELIVERED);
          return;
        }
        await reply(press.decision === 'deny' ? 'Denied' : 'Allowed');
        show(row, permissionAnswered(row.payload as PermissionFrame, press));
        return;
      }
      const frame = row.payload as QuestionFrame;
      const q = frame.questions[press.question];
      if (row.kind !== 'question' || !q) {
        await reply(EXPIRED);
        return;
      }
      const collected = { ...row.answers };
      if (collected[q.question] !== undefined) {
        // This question was answered already (a stale keyboard); the others are still open.
        await reply('Already answered.');
        return;
      }
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
        if (!q.multiSelect) {
          await reply(EXPIRED);
          return;
        }
        collected[q.question] = (selection[key] ?? [])
          .map((i) => q.options[i]?.label ?? '')
          .filter(Boolean)
          .join(', ');
      }
      // The callback is answered at once; a failure to queue the answer is said in a second notice.
      const outcome = answerQuestion({ ...row, selection }, frame, collected);
      await reply(outcome === 'queued' ? undefined : outcome === 'expired' ? EXPIRED : UNDELIVERED);
    },

    async typedAnswer(route, text) {
      const row = store.openPrompts(route).find((p) => p.kind === 'question');
      if (!row) return false;
      const frame = row.payload as QuestionFrame;
      const collected = { ...row.answers };
      const next = frame.questions.find((q) => collected[q.question] === undefined);
      if (!next) return false;
      collected[next.question] = text;
      const outcome = answerQuestion(row, frame, collected);
      // Undelivered (the gateway is stopping) was logged; the prompt stays open for another answer.
      return outcome !== 'expired';
    },

    open() {
      return store.openPrompts().length;
    },
  };
}
