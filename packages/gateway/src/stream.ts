/**
 * One turn's reply as the user sees it: the placeholder edited with the growing text, continued in new
 * messages past Telegram's 4096-character limit, and finally replaced by the Markdown rendered to HTML
 * (each message falling back to its own plain text when Telegram rejects its HTML).
 *
 * Invariants:
 * - At most one live call per reply is pending in the courier (key `stream:<turn>`): a newer text
 *   replaces an older pending one, so edits never pile up behind the budget.
 * - The live text is plain; only the final render carries formatting.
 * - After `finish`, the reply's messages hold exactly the final chunks, in order, and no others:
 *   surplus live messages are deleted.
 * - Crash safety: every new message goes out through the send journal as the reply's own (its slot in
 *   the list), and its id is recorded in the transaction that ends the send; a surplus message is
 *   dropped from the list only after it is deleted. So after a `kill -9` at any point the list (plus what
 *   the journal's boot reconciliation adopts) names every message of the reply, and the resumed final
 *   render leaves no stray and no double.
 *
 * This is the classic reply (`replies: classic`, and the fallback of `rich-reply.ts`). Rich replies
 * supersede it: private chats stream a draft and persist it with one `sendRichMessage` — the draft need
 * not become a placeholder there, because a private chat gets none (the draft appears at once instead),
 * and the finish is one rich message, not an HTML render to edit into; groups edit their placeholder
 * into a rich message. See `rich-reply.ts`.
 */
import type { Logger, Route } from '@switchyard/protocol';
import { type BotApi, errorText, isGone, isNotModified, isParseError } from './bot-api.js';
import { threadParams } from './core/route.js';
import type { Courier } from './courier.js';
import { type HtmlChunk, renderMarkdown, splitPlain } from './markdown.js';
import type { SendJournal } from './send-journal.js';

/** What a reply stream needs. */
export interface ReplyStreamOptions {
  api: Pick<BotApi, 'editMessageText' | 'deleteMessage'>;
  /** Sends the reply's new messages (see the invariants). */
  journal: Pick<SendJournal, 'send'>;
  courier: Courier;
  route: Route;
  /** Names the reply in courier keys, logs and the send journal (the turn id). */
  key: string;
  /** Messages the reply already owns (the placeholder), in order. */
  messageIds: readonly number[];
  /** Told whenever the set of messages changes, so it can be made durable. */
  onMessages(ids: readonly number[]): void;
  logger: Logger;
}

/** The handle of one streamed reply. */
export interface ReplyStream {
  /**
   * Shows the reply so far live, within the chat's budget; ignored after `finish`. `text` is read only
   * when an edit is about to go out (at most about once a second), not at every delta.
   */
  show(text: () => string): void;
  /** Replaces the live text with the rendered final Markdown; resolves when Telegram has it. */
  finish(markdown: string): Promise<void>;
  /** The reply's messages, in order. */
  readonly messageIds: readonly number[];
  /**
   * Whether a note about the turn ("⏹ Stopped.") belongs inside the final text (rich replies) rather
   * than in a message of its own (this classic stream).
   */
  readonly notesInline: boolean;
}

/** Creates the stream for one reply. Nothing is sent until `show` or `finish`. */
export function createReplyStream(options: ReplyStreamOptions): ReplyStream {
  const { api, journal, courier, route, logger } = options;
  const chatId = route.chatId;
  const thread = threadParams(route);
  const ids = [...options.messageIds];
  /** What each message shows now (live text), so unchanged messages are not edited. */
  const shown: (string | undefined)[] = [];
  const liveKey = `stream:${options.key}`;
  /** Reads the reply so far (see `show`); empty until the first `show`. */
  let latest: () => string = () => '';
  let finished = false;
  let scheduled = false;

  const setIds = (): void => options.onMessages([...ids]);

  /** One Bot API call that moves the live view one step towards `latest`. */
  const liveStep = async (): Promise<void> => {
    scheduled = false;
    if (finished) return;
    const text = latest();
    if (text.trim().length === 0) return;
    const pieces = splitPlain(text);
    const i = pieces.findIndex((piece, index) => shown[index] !== piece);
    if (i < 0) return;
    const piece = pieces[i] as string;
    try {
      if (i < ids.length) {
        await api.editMessageText(chatId, ids[i] as number, piece, {
          link_preview_options: { is_disabled: true },
        });
      } else {
        await journal.send(
          chatId,
          piece,
          { ...thread, link_preview_options: { is_disabled: true } },
          {
            owner: { kind: 'reply', turnId: options.key, slot: i },
            adopt: (id) => {
              ids.push(id);
              setIds();
            },
          },
        );
      }
      shown[i] = piece;
    } catch (error) {
      if (isNotModified(error)) shown[i] = piece;
      else {
        // A live edit that failed is not retried as such: the next text (or the final render) supersedes it.
        shown[i] = piece;
        logger.warn(
          { event: 'stream_edit_failed', chat: chatId, error: errorText(error) },
          'live edit failed',
        );
      }
    }
    // More arrived meanwhile (or more pieces are left to show): another step.
    const now = latest();
    if (now !== text || pieces.some((p, index) => shown[index] !== p)) schedule();
  };

  const schedule = (): void => {
    if (scheduled || finished) return;
    scheduled = true;
    void courier.call(chatId, liveStep, { priority: 'low', key: liveKey });
  };

  /**
   * Puts `chunks` into the reply's messages: edit the owned ones, send the rest, delete the surplus.
   * A chunk whose HTML Telegram rejects goes out as its own plain text instead — the same characters
   * without formatting — so the fallback never changes what the user reads or where the cuts are.
   */
  const place = async (chunks: readonly HtmlChunk[]): Promise<void> => {
    for (let i = 0; i < chunks.length; i++) {
      const chunk = chunks[i] as HtmlChunk;
      const put = async (html: boolean): Promise<void> => {
        const text = html ? chunk.html : chunk.text;
        const extra = html ? { parse_mode: 'HTML' as const } : {};
        if (i < ids.length) {
          try {
            await api.editMessageText(chatId, ids[i] as number, text, {
              ...extra,
              link_preview_options: { is_disabled: true },
            });
            return;
          } catch (error) {
            if (isNotModified(error)) return;
            if (!isGone(error)) throw error;
            // The user deleted this message: send the chunk as a new one in its place.
            ids.splice(i, 1);
          }
        }
        await journal.send(
          chatId,
          text,
          { ...thread, ...extra, link_preview_options: { is_disabled: true } },
          {
            owner: { kind: 'reply', turnId: options.key, slot: i },
            adopt: (id) => {
              ids.splice(i, 0, id);
              setIds();
            },
          },
        );
      };
      await courier.call(
        chatId,
        async () => {
          try {
            await put(true);
          } catch (error) {
            if (!isParseError(error)) throw error;
            logger.warn(
              { event: 'stream_html_rejected', chat: chatId, chunk: i, error: errorText(error) },
              'HTML rejected; sending this part as plain text',
            );
            await put(false);
          }
        },
        // The first final call takes the place of any pending live step.
        i === 0 ? { priority: 'normal', key: liveKey } : { priority: 'normal' },
      );
    }
    while (ids.length > chunks.length) {
      // Deleted first, forgotten after: a crash in between leaves it listed, and the resumed render
      // deletes it again (a failed delete is only logged), instead of leaving it unknown and visible.
      const surplus = ids[ids.length - 1] as number;
      await courier
        .call(chatId, () => api.deleteMessage(chatId, surplus))
        .catch((error: unknown) => logger.warn({ event: 'stream_delete_failed', error: errorText(error) }));
      ids.pop();
      setIds();
    }
  };

  return {
    get messageIds() {
      return ids;
    },
    notesInline: false,
    show(text) {
      if (finished) return;
      latest = text;
      schedule();
    },
    async finish(markdown) {
      finished = true;
      const source = markdown.trim().length > 0 ? markdown : '(no text)';
      try {
        await place(renderMarkdown(source));
      } catch (error) {
        logger.error(
          { event: 'stream_final_failed', chat: chatId, error: errorText(error) },
          'final render failed',
        );
        throw error;
      }
    },
  };
}
