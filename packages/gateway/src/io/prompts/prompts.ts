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
 *
 * What a press or a typed answer means is decided by the pure `core/prompts/prompt-press.ts`; this shell
 * reads the row, performs the decision (answers the callback, writes, edits the message) and nothing else.
 *
 * A permission prompt whose summary could not show the whole input (the bridge cut something) comes with
 * `fullInput`: it is sent as a file (`input.json`) first, and the prompt, saying so, only after that send
 * settled, so what Allow approves is always in the chat above its buttons. The row keeps the frame
 * without it: the file is in the chat, and a megabyte of input need not sit in SQLite.
 */
import { escapeHtml } from '@switchyard/card';
import type { FrameOf, GatewayToBridge, Logger, Route } from '@switchyard/protocol';
import { InputFile } from 'grammy';
import type { CallbackQuery, InlineKeyboardMarkup } from 'grammy/types';
import { threadParams } from '../../core/intake/route.js';
import { decidePress, decideTypedAnswer, isComplete } from '../../core/prompts/prompt-press.js';
import type { GatewayStore, PromptRow } from '../../store/store.js';
import { type BotApi, errorText, isNotModified } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { SendJournal } from '../telegram/send-journal.js';
import {
  decodePress,
  permissionAnswered,
  permissionChoices,
  permissionPrompt,
  permissionTitle,
  questionPrompt,
} from './keyboards.js';

/** Said to a press whose prompt is gone. */
export const EXPIRED = 'This request has expired.';

/** Said to a press that did not come from the prompt's own message (another chat, topic or message). */
export const ELSEWHERE = 'This button belongs to a prompt in another chat; answer it where it was asked.';

/** Said to a press whose answer could not be queued for the bridge (the gateway is shutting down). */
export const UNDELIVERED = 'Your answer could not be passed on: the gateway is stopping.';

/** What the prompt handler needs. */
export interface PromptsOptions {
  api: Pick<BotApi, 'editMessageText' | 'editMessageReplyMarkup' | 'answerCallbackQuery' | 'sendDocument'>;
  /** Sends the prompt's message as the prompt's own (see `io/telegram/send-journal.ts`). */
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
    if (!isComplete(frame, collected)) {
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
      const { fullInput, ...payload } =
        frame.type === 'permission_request' ? frame : { ...frame, fullInput: undefined };
      const row = store.addPrompt({
        requestId: frame.requestId,
        kind: frame.type === 'question' ? 'question' : 'permission',
        route: frame.route,
        payload,
      });
      const view =
        frame.type === 'question'
          ? questionPrompt(frame, row.token, {}, {})
          : permissionPrompt(frame, row.token);
      const attached =
        fullInput === undefined
          ? Promise.resolve()
          : courier
              .call(
                frame.route.chatId,
                () =>
                  api.sendDocument(
                    frame.route.chatId,
                    new InputFile(Buffer.from(fullInput, 'utf8'), 'input.json'),
                    {
                      ...threadParams(frame.route),
                      caption: 'The whole input of the request below: read it before you allow it.',
                    },
                  ),
                { priority: 'prompt' },
              )
              .then(
                () => undefined,
                (error: unknown) =>
                  logger.warn(
                    { event: 'prompt_input_not_sent', error: errorText(error) },
                    'input file not sent',
                  ),
              );
      void attached
        .then(() =>
          courier.call(
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
            { priority: 'prompt' },
          ),
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
      const press = decodePress(query.data);
      const stored = press ? store.getPromptByToken(press.token) : undefined;
      const decision = decidePress({
        press,
        row: stored,
        message: query.message,
        choices:
          stored?.kind === 'permission' ? permissionChoices(stored.payload as PermissionFrame) : undefined,
      });
      const stale = query.message;
      switch (decision.kind) {
        case 'expired':
          await reply(EXPIRED);
          // A stale keyboard (the edit that removed it was lost, or the store was reset): take it away.
          if (decision.clearKeyboard && stale) {
            void courier
              .call(stale.chat.id, () =>
                api.editMessageReplyMarkup(stale.chat.id, stale.message_id, {
                  reply_markup: { inline_keyboard: [] },
                }),
              )
              .catch(() => {});
          }
          return;
        case 'elsewhere':
          logger.warn({ event: 'press_elsewhere', chat: stale?.chat.id }, 'press refused: not on its prompt');
          await reply(ELSEWHERE);
          return;
        case 'already_answered':
          await reply('Already answered.');
          return;
      }
      if (!stored || !press) return; // decidePress says expired for both
      // The message the press came from, when the send's result was not recorded yet.
      const row: PromptRow = { ...stored, messageId: stored.messageId ?? stale?.message_id };
      if (decision.kind === 'permission') {
        const outcome = answer(row.token, decision.answer);
        if (outcome !== 'queued') {
          await reply(outcome === 'expired' ? EXPIRED : UNDELIVERED);
          return;
        }
        await reply(decision.ack);
        if (press.kind === 'permission') show(row, permissionAnswered(row.payload as PermissionFrame, press));
        return;
      }
      const frame = row.payload as QuestionFrame;
      if (decision.kind === 'toggle') {
        store.setPromptSelection(row.token, decision.selection);
        await reply();
        const view = questionPrompt(frame, row.token, decision.selection, row.answers);
        show({ ...row, selection: decision.selection }, view.html, view.keyboard);
        return;
      }
      // The callback is answered at once; a failure to queue the answer is said in a second notice.
      const outcome = answerQuestion({ ...row, selection: decision.selection }, frame, decision.collected);
      await reply(outcome === 'queued' ? undefined : outcome === 'expired' ? EXPIRED : UNDELIVERED);
    },

    async typedAnswer(route, text) {
      const typed = decideTypedAnswer(store.openPrompts(route), text);
      if (!typed) return false;
      const outcome = answerQuestion(
        typed.row as PromptRow,
        typed.row.payload as QuestionFrame,
        typed.collected,
      );
      // Undelivered (the gateway is stopping) was logged; the prompt stays open for another answer.
      return outcome !== 'expired';
    },

    open() {
      return store.openPrompts().length;
    },
  };
}
