/**
 * The one place that builds a turn's reply: the reply machine (`core/reply/reply.ts`) behind its shell
 * (`reply.ts`), presented as the turn machine's `open` action says — decided when the opening message
 * came in (`core/reply/presentation.ts`), never here. Owns the two pieces of state every reply of the
 * gateway shares: the per-chat draft bucket, and the fact — learnt once, from a "method not found" —
 * that the Bot API server has no rich messages (which the next decisions read: classic from then on).
 */
import { type Clock, type Logger, type Route, systemClock } from '@switchyard/protocol';
import { threadParams } from '../../core/intake/route.js';
import type { ReplyPresentation } from '../../core/reply/presentation.js';
import { createDraftPacer } from '../../core/telegram/send-pacing.js';
import type { GatewayStore, TurnRow } from '../../store/store.js';
import { type BotApi, errorText } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { SendJournal } from '../telegram/send-journal.js';
import type { ServerPartsState } from '../telegram/server-parts.js';
import { createReply, type Reply } from './reply.js';

/** The handle of a turn's reply (one type for every mode). */
export type ReplyStream = Reply;
/** The handle of a turn's reply; the same as {@link ReplyStream}. */
export type RichReply = Reply;

/** What the factory needs. */
export interface RepliesOptions {
  api: Pick<BotApi, 'editMessageText' | 'deleteMessage' | 'sendMessageDraft' | 'sendRichMessageDraft'>;
  journal: Pick<SendJournal, 'send' | 'sendRich'>;
  courier: Courier;
  store: Pick<GatewayStore, 'setTurnMessages'>;
  logger: Logger;
  /** Time for the draft pacing and timers; default the system clock. */
  clock?: Clock | undefined;
  /** The run's knowledge of the server's newer parts (drafts' `keep_on_stop`). */
  serverParts?: ServerPartsState | undefined;
}

/** The reply factory's handle. */
export interface Replies {
  /** Whether the server answered "method not found" for rich messages (learnt once per run). */
  richMissing(): boolean;
  /**
   * The stream of a turn's reply, presented as `open.presentation` says. `opener`: the message that
   * opened the turn (the drafts' id, and what the answer replies to). `after`: the previous reply of the
   * conversation; no message call of this one is queued before it settles.
   */
  stream(
    open: Pick<TurnRow, 'turnId' | 'route'> & {
      presentation: ReplyPresentation;
      messageIds: readonly number[];
      opener?: number | undefined;
    },
    after?: Promise<void>,
  ): ReplyStream | RichReply;
  /**
   * "Thinking…" as a draft for a message that gets no placeholder message, under the id its turn's
   * drafts will use. False (nothing sent) when the chat's draft bucket is empty: the turn shows it.
   */
  thinking(route: Route, draftId: number): boolean;
}

/** A non-zero 31-bit draft id for a reply that has no opening message id to use. */
function draftIdOf(turnId: string): number {
  let h = 7;
  for (let i = 0; i < turnId.length; i++) h = (h * 31 + turnId.charCodeAt(i)) | 0;
  return (Math.abs(h) % 2_147_483_646) + 1;
}

/** Creates the factory; one per gateway. */
export function createReplies(options: RepliesOptions): Replies {
  const { api, journal, courier, store, logger } = options;
  const clock = options.clock ?? systemClock;
  const pacer = createDraftPacer();
  /** The server lacks rich messages: the one place this is known. */
  let missing = false;

  return {
    richMissing: () => missing,
    stream(row, after) {
      const { messageIds: ids, opener } = row;
      return createReply({
        mode: row.presentation,
        api,
        journal,
        courier,
        clock,
        pacer,
        route: row.route,
        key: row.turnId,
        draftId: opener ?? draftIdOf(row.turnId),
        replyTo: opener,
        after,
        messageIds: ids,
        onMessages: (next) => store.setTurnMessages(row.turnId, next),
        rich: () => !missing,
        onMissing: () => {
          if (!missing)
            logger.warn(
              { event: 'rich_missing' },
              'the Bot API server lacks rich messages (method not found): classic replies from now on',
            );
          missing = true;
        },
        logger,
        serverParts: options.serverParts,
      });
    },
    thinking(route, draftId) {
      const now = clock.now();
      if (pacer.delay(route.chatId, now) > 0) return false;
      pacer.take(route.chatId, now);
      // Drafts spend no send budget (they are not messages), so this bypasses the courier.
      void api
        .sendMessageDraft(route.chatId, draftId, '', {
          ...threadParams(route),
          can_stop: true,
        })
        .catch((error: unknown) =>
          logger.warn({ event: 'draft_failed', chat: route.chatId, error: errorText(error) }),
        );
      return true;
    },
  };
}
