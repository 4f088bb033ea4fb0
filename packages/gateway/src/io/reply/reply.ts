/**
 * The shell of one turn's reply: feeds the reply machine (`core/reply/reply.ts`) with the text, the turn's
 * signals and each operation's outcome, stamped with the clock's time, and performs what it asks —
 * drafts straight to the Bot API (they spend no send budget; the chat's draft bucket paces them), edits,
 * sends and deletes inside the chat's courier lane, every new message through the send journal as the
 * reply's own (its slot), and one timer on the clock for the next draft.
 *
 * Crash safety (kept from the journal's design): a send's outcome is reported to the machine inside the
 * journal's `adopt`, so the `persist` it answers with — the new id at its slot in the reply's list — is
 * written in the transaction that ends the send; a surplus message is forgotten only after its delete.
 * After a `kill -9` at any point the list (plus what the journal's boot reconciliation adopts) names
 * every message of the reply, and the resumed final render leaves no stray and no double.
 */
import { type Clock, createWakeTimer, type Logger, type Route } from '@switchyard/protocol';
import { threadParams } from '../../core/intake/route.js';
import {
  type Content,
  initialReply,
  type Outcome,
  type ReplyAction,
  type ReplyEnv,
  type ReplyFormat,
  type ReplyInput,
  type ReplyMode,
  stepReply,
} from '../../core/reply/reply.js';
import { draftStopParams, UNTRIED } from '../../core/telegram/newer-api.js';
import type { DraftPacer } from '../../core/telegram/send-pacing.js';
import { renderMarkdown, splitPlain } from '../../core/text/markdown.js';
import { RICH_TEXT_LIMIT, splitRich, toRichMarkdown } from '../../core/text/rich-markdown.js';
import {
  type BotApi,
  errorText,
  isGone,
  isMethodMissing,
  isNotModified,
  isParseError,
  isRichRefused,
} from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { SendJournal } from '../telegram/send-journal.js';
import type { ServerPartsState } from '../telegram/server-parts.js';

/** Telegram's limits, through the gateway's renderers. */
export const TELEGRAM_FORMAT: ReplyFormat = {
  plainPieces: (text) => splitPlain(text),
  richLive(text, which) {
    const rich = toRichMarkdown(text);
    if (rich.length <= RICH_TEXT_LIMIT) return rich;
    // A draft is a preview: a long reply shows its last block-bounded part (an edit: its first).
    const parts = splitRich(rich);
    return (which === 'first' ? parts[0] : parts[parts.length - 1]) ?? '';
  },
  richParts: (markdown) => splitRich(toRichMarkdown(markdown)),
  htmlParts: (markdown) => renderMarkdown(markdown),
};

/** What one reply's shell needs. */
export interface ReplyOptions {
  /** Decided once, by the factory (`replies.ts`). */
  mode: ReplyMode;
  api: Pick<BotApi, 'editMessageText' | 'deleteMessage' | 'sendMessageDraft' | 'sendRichMessageDraft'>;
  journal: Pick<SendJournal, 'send' | 'sendRich'>;
  courier: Courier;
  clock: Clock;
  /** The chat's draft bucket, shared by every reply of the gateway. */
  pacer: DraftPacer;
  route: Route;
  /** The turn id: courier key, logs, send-journal owner. */
  key: string;
  /** Non-zero; the same id for every draft of the reply, so Telegram animates the changes. */
  draftId: number;
  /** The message the reply answers (a rich final message replies to it), if known. */
  replyTo?: number | undefined;
  /**
   * The previous reply of the conversation: no courier call of this one is queued before it settles,
   * so a turn's final message appears before any later turn's answer.
   */
  after?: Promise<void> | undefined;
  /** Messages the reply already owns (a placeholder), in order. */
  messageIds: readonly number[];
  /** Told whenever the list of messages changes, so it can be made durable. */
  onMessages(ids: readonly number[]): void;
  /** Whether the server has rich messages: the factory's one fact, learnt through `onMissing`. */
  rich(): boolean;
  onMissing(): void;
  logger: Logger;
  /** The run's knowledge of the server's newer parts (`keep_on_stop`); default: untried, not learnt. */
  serverParts?: Pick<ServerPartsState, 'draftStop' | 'report'> | undefined;
  format?: ReplyFormat;
  draftEveryMs?: number;
  draftRefreshMs?: number;
}

/** The handle of one reply, as `Replies.stream` returns it. */
export interface Reply {
  /**
   * Shows the reply so far: drafts (paced) or live edits (within the chat's budget); ignored after `finish`.
   */
  show(text: () => string): void;
  /** Renders the final Markdown into the reply's messages; resolves when Telegram has it all. */
  finish(markdown: string): Promise<void>;
  /** Sends the "Thinking…" draft (draft mode; otherwise nothing). */
  thinking(): void;
  /** The user pressed the draft's stop button: no more drafts; `finish` still persists the text. */
  stopDrafts(): void;
  /** The reply's messages, in order. */
  readonly messageIds: readonly number[];
  /** Whether a note about the turn ("⏹ Stopped.") goes inside the final text (rich) or apart (classic). */
  readonly notesInline: boolean;
}

/** How each of the machine's warnings is logged. */
const WARNINGS: Record<string, { message: string; level?: 'error' }> = {
  draft_failed: { message: 'draft failed' },
  stream_edit_failed: { message: 'live edit failed' },
  stream_html_rejected: { message: 'HTML rejected; sending this part as plain text' },
  rich_refused: { message: 'rich message refused; sending the classic render' },
  stream_delete_failed: { message: 'surplus message not deleted' },
  stream_final_failed: { message: 'final render failed', level: 'error' },
};

/** Telegram's answer to an operation, as the machine's outcome. */
export function outcomeOf(error: unknown, content: Content | undefined): Outcome {
  const text = errorText(error);
  if (isNotModified(error)) return { kind: 'not_modified', error: text };
  if (isGone(error)) return { kind: 'gone', error: text };
  if (content?.kind === 'html' && isParseError(error)) return { kind: 'html_refused', error: text };
  if (content?.kind === 'rich' && isMethodMissing(error)) return { kind: 'missing', error: text };
  if (content?.kind === 'rich' && isRichRefused(error)) return { kind: 'rich_refused', error: text };
  return { kind: 'failed', error: text };
}

/** Creates one reply; nothing is sent until `thinking`, `show` or `finish`. */
export function createReply(options: ReplyOptions): Reply {
  const { api, journal, courier, clock, pacer, route, logger, mode } = options;
  const chatId = route.chatId;
  const thread = threadParams(route);
  const liveKey = `stream:${options.key}`;
  let state = initialReply({
    mode,
    format: options.format ?? TELEGRAM_FORMAT,
    ids: options.messageIds,
    ...(options.draftEveryMs === undefined ? {} : { draftEveryMs: options.draftEveryMs }),
    ...(options.draftRefreshMs === undefined ? {} : { draftRefreshMs: options.draftRefreshMs }),
    // A lane's reply is classic (no previews or images) and still answers the run's note.
    answersOpener: options.route.lane !== undefined,
  });
  let lastError: unknown;
  let settle: { resolve(): void; reject(error: unknown): void } | undefined;
  let finishing: Promise<void> | undefined;
  /** The previous reply of the conversation while it has not settled (see `after`). */
  let before: Promise<void> | undefined = options.after;
  void options.after?.finally(() => {
    before = undefined;
  });

  const env = (): ReplyEnv => {
    const now = clock.now();
    return { now, draftDelay: mode === 'draft' ? pacer.delay(chatId, now) : 0, rich: options.rich() };
  };

  /** The next draft's wake-up (`wakeAt` of the latest step). */
  const wake = createWakeTimer(clock, () => void step({ kind: 'tick' }));

  /** Applies an input and performs its actions; returns the Bot API calls it started. */
  const step = (input: ReplyInput): Promise<void>[] => {
    const at = env();
    const result = stepReply(state, input, at);
    state = result.state;
    // One timer, re-armed only when the wake-up time moves (not at every delta); none when none is wanted.
    wake.set(result.wakeAt);
    const started: Promise<void>[] = [];
    for (const action of result.actions) {
      const call = perform(action, at.now);
      if (call) started.push(call);
    }
    return started;
  };

  const report = (seq: number, outcome: Outcome): void => {
    if (outcome.kind === 'missing') options.onMissing();
    void step({ kind: 'outcome', seq, outcome });
  };

  const perform = (action: ReplyAction, now: number): Promise<void> | undefined => {
    switch (action.kind) {
      case 'persist':
        options.onMessages([...action.ids]);
        return undefined;
      case 'warn': {
        const how = WARNINGS[action.event] ?? { message: action.event };
        const fields = { event: action.event, chat: chatId, turn: options.key, error: action.error };
        if (how.level === 'error') logger.error(fields, how.message);
        else logger.warn(fields, how.message);
        return undefined;
      }
      case 'done':
        if (!action.ok) return void settle?.reject(lastError ?? new Error('final render failed'));
        return void settle?.resolve();
      case 'lane': {
        if (before) {
          const queue = () => perform(action, now);
          void before.then(queue, queue);
          return undefined;
        }
        let ran = false;
        void courier
          .call(
            chatId,
            async () => {
              ran = true;
              await Promise.all(step({ kind: 'granted', seq: action.seq }));
            },
            { priority: action.priority, ...(action.replaces ? { key: liveKey } : {}) },
          )
          .then(() => {
            if (!ran) step({ kind: 'dropped', seq: action.seq });
          });
        return undefined;
      }
      case 'draft':
        pacer.take(chatId, now);
        return attempt(action.seq, action.content, () => draft(action.content));
      case 'edit':
        return attempt(action.seq, action.content, () => edit(action.messageId, action.content));
      case 'delete':
        return attempt(action.seq, undefined, () => api.deleteMessage(chatId, action.messageId));
      case 'send': {
        let reported = false;
        const owned = {
          owner: { kind: 'reply' as const, turnId: options.key, slot: action.slot },
          // Reported inside the journal's transaction: the machine's `persist` lands in it.
          adopt: (id: number) => {
            reported = true;
            report(action.seq, { kind: 'ok', messageId: id });
          },
        };
        return attempt(
          action.seq,
          action.content,
          async () => {
            const sent = await send(action.content, action.replyTo, owned);
            if (!reported) report(action.seq, { kind: 'ok', messageId: sent.message_id });
          },
          true,
        );
      }
    }
  };

  /** Runs one Bot API call and reports its outcome (`selfReported`: a send reports its own success). */
  const attempt = async (
    seq: number,
    content: Content | undefined,
    call: () => Promise<unknown>,
    selfReported = false,
  ): Promise<void> => {
    try {
      await call();
    } catch (error) {
      lastError = error;
      return report(seq, outcomeOf(error, content));
    }
    if (!selfReported) report(seq, { kind: 'ok' });
  };

  /**
   * One draft, with a stop button that keeps the draft shown when pressed (`keep_on_stop`); a server
   * that refuses the parameter gets this draft again without it, and none with it for the rest of the run.
   */
  const draft = async (content: Content): Promise<unknown> => {
    const stop = options.serverParts?.draftStop() ?? draftStopParams(UNTRIED);
    const call = (common: typeof thread & { can_stop: true; keep_on_stop?: true }) =>
      content.kind === 'rich'
        ? api.sendRichMessageDraft(chatId, options.draftId, { markdown: content.markdown }, common)
        : api.sendMessageDraft(chatId, options.draftId, content.text, common);
    try {
      return await call({ ...thread, ...stop });
    } catch (error) {
      if (!stop.keep_on_stop || options.serverParts?.report('keep_on_stop', { error }) !== 'old_way')
        throw error;
      return call({ ...thread, can_stop: true });
    }
  };

  const edit = (messageId: number, content: Content): Promise<unknown> => {
    const preview = { link_preview_options: { is_disabled: true } };
    if (content.kind === 'rich')
      return api.editMessageText(chatId, messageId, { markdown: content.markdown });
    if (content.kind === 'html')
      return api.editMessageText(chatId, messageId, content.html, { parse_mode: 'HTML', ...preview });
    return api.editMessageText(chatId, messageId, content.text, preview);
  };

  const send = (
    content: Content,
    replyTo: boolean,
    owned: { owner: { kind: 'reply'; turnId: string; slot: number }; adopt(id: number): void },
  ): Promise<{ message_id: number }> => {
    const preview = { link_preview_options: { is_disabled: true } };
    const reply =
      replyTo && options.replyTo !== undefined
        ? { reply_parameters: { message_id: options.replyTo, allow_sending_without_reply: true } }
        : {};
    if (content.kind === 'rich')
      return journal.sendRich(chatId, content.markdown, { ...thread, ...reply }, owned);
    if (content.kind === 'html')
      return journal.send(
        chatId,
        content.html,
        { ...thread, ...reply, parse_mode: 'HTML', ...preview },
        owned,
      );
    return journal.send(chatId, content.text, { ...thread, ...reply, ...preview }, owned);
  };

  return {
    get messageIds() {
      return state.ids;
    },
    notesInline: mode !== 'classic',
    show(text) {
      if (state.final) return;
      step({ kind: 'text', text: text() });
    },
    thinking() {
      step({ kind: 'thinking' });
    },
    stopDrafts() {
      step({ kind: 'stop' });
    },
    finish(markdown) {
      if (finishing) return finishing;
      finishing = new Promise<void>((resolve, reject) => {
        settle = { resolve, reject };
      });
      step({ kind: 'finish', markdown });
      return finishing;
    },
  };
}
