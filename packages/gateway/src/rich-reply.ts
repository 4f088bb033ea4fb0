/**
 * One turn's reply as a Telegram rich message (Bot API 10.1), in one of two shapes:
 *
 * - `draft` (private chats): the reply streams as an ephemeral draft — "Thinking…" (an empty
 *   `sendMessageDraft`) until the model speaks, then the text as rich Markdown — with a stop button
 *   (`can_stop`), and is persisted at the end by one `sendRichMessage`. There is no placeholder message,
 *   so nothing is left to strand and nothing is edited.
 * - `edit` (groups and forum topics, where drafts do not exist): the placeholder becomes the answer
 *   through `editMessageText` with `rich_message`, paced by the chat's budget through the courier.
 *
 * This supersedes `stream.ts`'s reasons for not using drafts: the draft no longer has to become the
 * placeholder (private chats get none: the draft appears at once instead), and the final message is one
 * rich message, so there is no HTML render to edit into. The draft and the final message do overlap
 * until the client drops the draft when the bot's message arrives, as Telegram designed the pair.
 *
 * Invariants:
 * - Drafts are not messages: they do not spend the chat's send budget, and are paced by their own
 *   interval ({@link DRAFT_EVERY_MS}: Telegram documents no draft limit; bots drafting every 300 ms were
 *   answered 429). At most one draft call is in flight; a newer text replaces an unsent one.
 * - A draft lives 30 s: while the text does not change (a long tool phase) it is sent again every
 *   {@link DRAFT_REFRESH_MS}, so the preview never vanishes mid-turn.
 * - The final message goes out through the send journal (`sendRich`), slot by slot, so a crash or a
 *   lost answer leaves neither a stray nor a double (see `send-journal.ts`).
 * - A rich message Telegram refuses falls back to the classic render (HTML, then plain text) of the
 *   same Markdown, logged with Telegram's reason; a server that lacks the rich methods (404) is
 *   reported through `onMissing` so the gateway stops trying them.
 */
import type { Logger, Route } from '@switchyard/protocol';
import { type BotApi, errorText, isGone, isMethodMissing, isNotModified, isRichRefused } from './bot-api.js';
import { threadParams } from './core/route.js';
import type { Courier } from './courier.js';
import { splitPlain } from './markdown.js';
import { RICH_TEXT_LIMIT, splitRich, toRichMarkdown } from './rich-markdown.js';
import type { SendJournal } from './send-journal.js';
import { createReplyStream, type ReplyStream } from './stream.js';

/** Least time between two drafts of one reply. */
export const DRAFT_EVERY_MS = 600;
/** An unchanged draft is sent again after this long, inside its 30-second lifetime. */
export const DRAFT_REFRESH_MS = 20_000;

/**
 * Drafts per private chat, across replies (a new message's "Thinking…" can follow the previous reply's
 * last draft at once): a bucket of {@link DRAFT_BURST} refilled one per {@link DRAFT_EVERY_MS}.
 */
export interface DraftPacer {
  /** Milliseconds until a draft may go to `chatId` (0: now). */
  delay(chatId: number, now: number): number;
  /** Records a draft to `chatId` at `now`. */
  take(chatId: number, now: number): void;
}

/** Drafts a rested chat may send at once ("Thinking…" and the first words). */
export const DRAFT_BURST = 2;

/** Creates the per-chat draft bucket; pure arithmetic over the times it is given. */
export function createDraftPacer(everyMs = DRAFT_EVERY_MS, burst = DRAFT_BURST): DraftPacer {
  const chats = new Map<number, { tokens: number; at: number }>();
  const refill = (chatId: number, now: number) => {
    const c = chats.get(chatId) ?? { tokens: burst, at: now };
    c.tokens = Math.min(burst, c.tokens + Math.max(0, now - c.at) / everyMs);
    c.at = now;
    chats.set(chatId, c);
    return c;
  };
  return {
    delay(chatId, now) {
      const c = refill(chatId, now);
      return c.tokens >= 1 ? 0 : Math.ceil((1 - c.tokens) * everyMs);
    },
    take(chatId, now) {
      refill(chatId, now).tokens -= 1;
      if (chats.size > 10_000) for (const [id, c] of chats) if (c.tokens >= burst) chats.delete(id);
    },
  };
}

/** Timers, injectable for tests. */
export interface ReplyClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: ReplyClock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What a rich reply needs. */
export interface RichReplyOptions {
  mode: 'draft' | 'edit';
  api: Pick<BotApi, 'sendMessageDraft' | 'sendRichMessageDraft' | 'editMessageText' | 'deleteMessage'>;
  journal: Pick<SendJournal, 'send' | 'sendRich'>;
  courier: Courier;
  route: Route;
  /** The turn id: courier keys, logs, send-journal owner. */
  key: string;
  /** Non-zero; the same id for every draft of the reply, so Telegram animates the changes. */
  draftId: number;
  /** The message the reply answers (the final message replies to it), if known. */
  replyTo?: number | undefined;
  /** Messages the reply already owns (a group's placeholder), in order. */
  messageIds: readonly number[];
  onMessages(ids: readonly number[]): void;
  /** The server lacks the rich methods: the caller remembers it and uses the classic path. */
  onMissing(): void;
  logger: Logger;
  /** The chat's draft bucket, shared by every reply of the gateway; default one of this reply's own. */
  pacer?: DraftPacer;
  clock?: ReplyClock;
  draftEveryMs?: number;
  draftRefreshMs?: number;
}

/** A rich reply: a {@link ReplyStream} whose notes go inside the final message. */
export interface RichReply extends ReplyStream {
  /** Sends the "Thinking…" draft now (private chats); no-op in `edit` mode. */
  thinking(): void;
  /** The user pressed the draft's stop button: no more drafts; `finish` still persists the text. */
  stopDrafts(): void;
}

/** The part of a long reply that a live view shows: the last block-bounded part, as drafts are a preview. */
function livePart(rich: string, which: 'first' | 'last'): string {
  if (rich.length <= RICH_TEXT_LIMIT) return rich;
  const parts = splitRich(rich);
  return (which === 'first' ? parts[0] : parts[parts.length - 1]) ?? '';
}

/** Creates one rich reply; nothing is sent until `thinking`, `show` or `finish`. */
export function createRichReply(options: RichReplyOptions): RichReply {
  const { api, journal, courier, route, logger, mode } = options;
  const clock = options.clock ?? realClock;
  const every = options.draftEveryMs ?? DRAFT_EVERY_MS;
  const refresh = options.draftRefreshMs ?? DRAFT_REFRESH_MS;
  const pacer = options.pacer ?? createDraftPacer(every);
  const chatId = route.chatId;
  const thread = threadParams(route);
  const ids = [...options.messageIds];
  const liveKey = `stream:${options.key}`;
  let latest: () => string = () => '';
  let finished = false;
  let stopped = false;
  let missing = false;
  // Draft pacing state.
  let timer: unknown;
  let inFlight: Promise<void> | undefined;
  let lastAt = Number.NEGATIVE_INFINITY;
  let shown: string | undefined;
  // Edit-mode state.
  let editScheduled = false;
  let editShown: string | undefined;

  const setIds = (): void => options.onMessages([...ids]);
  const missingNow = (error: unknown): boolean => {
    if (!isMethodMissing(error)) return false;
    if (!missing) {
      missing = true;
      options.onMissing();
    }
    return true;
  };

  /** One draft: "Thinking…" while there is no text, else the text as rich Markdown (plain on refusal). */
  const sendDraft = async (text: string): Promise<void> => {
    const common = { ...thread, can_stop: true };
    if (text.trim().length === 0) {
      await api.sendMessageDraft(chatId, options.draftId, '', common);
      return;
    }
    try {
      const markdown = livePart(toRichMarkdown(text), 'last');
      await api.sendRichMessageDraft(chatId, options.draftId, { markdown }, common);
    } catch (error) {
      if (missingNow(error) || !isRichRefused(error)) throw error;
      // Half-written Markdown can be refused (an unclosed `<details>`): show this step as plain text.
      const plain = splitPlain(text);
      await api.sendMessageDraft(chatId, options.draftId, plain[plain.length - 1] ?? '', common);
    }
  };

  const pump = (): void => {
    timer = undefined;
    if (finished || stopped || missing || inFlight) return;
    const now = clock.now();
    const text = latest();
    const due = Math.max(text === shown ? lastAt + refresh : lastAt + every, now + pacer.delay(chatId, now));
    if (now < due) {
      timer = clock.setTimeout(pump, due - now);
      return;
    }
    lastAt = now;
    pacer.take(chatId, now);
    inFlight = sendDraft(text)
      .then(() => {
        shown = text;
      })
      .catch((error: unknown) => {
        shown = text;
        logger.warn({ event: 'draft_failed', chat: chatId, error: errorText(error) }, 'draft failed');
      })
      .finally(() => {
        inFlight = undefined;
        pump();
      });
  };

  const wake = (): void => {
    if (timer !== undefined) clock.clearTimeout(timer);
    pump();
  };

  /** One live edit of the group placeholder towards `latest` (edit mode). */
  const editStep = async (): Promise<void> => {
    editScheduled = false;
    const id = ids[0];
    if (finished || id === undefined) return;
    const text = latest();
    if (text.trim().length === 0 || text === editShown) return;
    editShown = text;
    try {
      if (missing) throw new Error('rich messages are missing');
      await api.editMessageText(chatId, id, { markdown: livePart(toRichMarkdown(text), 'first') });
    } catch (error) {
      if (isNotModified(error)) return;
      if (!missing && !missingNow(error) && !isRichRefused(error)) {
        logger.warn(
          { event: 'stream_edit_failed', chat: chatId, error: errorText(error) },
          'live edit failed',
        );
        return;
      }
      await api
        .editMessageText(chatId, id, splitPlain(text)[0] ?? text, {
          link_preview_options: { is_disabled: true },
        })
        .catch(() => {});
    }
    if (latest() !== text) scheduleEdit();
  };

  const scheduleEdit = (): void => {
    if (editScheduled || finished) return;
    editScheduled = true;
    void courier.call(chatId, editStep, { priority: 'low', key: liveKey });
  };

  /** Puts the final parts into the reply's messages; throws Telegram's refusal unchanged. */
  const place = async (parts: readonly string[]): Promise<void> => {
    for (let i = 0; i < parts.length; i++) {
      const markdown = parts[i] as string;
      await courier.call(
        chatId,
        async () => {
          if (i < ids.length) {
            try {
              await api.editMessageText(chatId, ids[i] as number, { markdown });
              return;
            } catch (error) {
              if (isNotModified(error)) return;
              if (!isGone(error)) throw error;
              ids.splice(i, 1);
            }
          }
          const reply =
            i === 0 && options.replyTo !== undefined
              ? { reply_parameters: { message_id: options.replyTo, allow_sending_without_reply: true } }
              : {};
          await journal.sendRich(
            chatId,
            markdown,
            { ...thread, ...reply },
            {
              owner: { kind: 'reply', turnId: options.key, slot: i },
              adopt: (id) => {
                ids.splice(i, 0, id);
                setIds();
              },
            },
          );
        },
        i === 0 ? { priority: 'normal', key: liveKey } : { priority: 'normal' },
      );
    }
    while (ids.length > parts.length) {
      const surplus = ids[ids.length - 1] as number;
      await courier
        .call(chatId, () => api.deleteMessage(chatId, surplus))
        .catch((error: unknown) => logger.warn({ event: 'stream_delete_failed', error: errorText(error) }));
      ids.pop();
      setIds();
    }
  };

  /** Today's render of the same Markdown over the same messages (HTML, then plain text). */
  const classic = (markdown: string): Promise<void> =>
    createReplyStream({
      api,
      journal,
      courier,
      route,
      key: options.key,
      messageIds: ids,
      onMessages: (next) => {
        ids.splice(0, ids.length, ...next);
        setIds();
      },
      logger,
    }).finish(markdown);

  return {
    get messageIds() {
      return ids;
    },
    notesInline: true,
    thinking() {
      if (mode !== 'draft' || finished) return;
      wake();
    },
    stopDrafts() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
    },
    show(text) {
      if (finished) return;
      latest = text;
      if (mode === 'draft') wake();
      else scheduleEdit();
    },
    async finish(markdown) {
      finished = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      await inFlight;
      // Telegram trims a message's text; the Markdown is trimmed here so what is stored is what is shown.
      const source = markdown.trim().length > 0 ? markdown.trim() : '(no text)';
      if (missing) return classic(source);
      try {
        await place(splitRich(toRichMarkdown(source)));
      } catch (error) {
        if (!missingNow(error) && !isRichRefused(error)) throw error;
        logger.warn(
          { event: 'rich_refused', chat: chatId, error: errorText(error) },
          'rich message refused; sending the classic render',
        );
        await classic(source);
      }
    },
  };
}
