/**
 * The one place that builds a turn's reply: the reply machine (`core/reply/reply.ts`) behind its shell
 * (`reply.ts`), presented as the turn machine's `open` action says — decided when the opening message
 * came in (`core/reply/presentation.ts`), never here. Owns the per-chat draft bucket every reply of the
 * gateway shares; what the server lacks — its newer parts, and rich messages, learnt once from a "method
 * not found" — is the run's knowledge of the server (`io/telegram/server-parts.ts`), which the next
 * presentations read (classic from then on).
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
  /** The run's knowledge of the server: its newer parts (drafts' `keep_on_stop`), and rich messages. */
  serverParts: ServerPartsState;
}

/** The reply factory's handle. */
export interface Replies {
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
  const { serverParts } = options;
  const pacer = createDraftPacer();

  return {
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
        rich: () => !serverParts.richMissing(),
        onMissing: () => serverParts.noteRichMissing(),
        logger,
        serverParts,
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
