/**
 * Which kind of reply a turn gets, and the one place that builds it: the reply machine
 * (`core/reply/reply.ts`) behind its shell (`reply.ts`), in one of three modes decided here, once,
 * when the reply is created. Owns the two pieces of state every reply of the gateway shares: the per-chat
 * draft bucket, and the fact — learnt once, from a "method not found" — that the Bot API server has no
 * rich messages (classic replies from then on).
 */
import { type Clock, type Logger, type Route, systemClock } from '@switchyard/protocol';
import { threadParams } from '../../core/intake/route.js';
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
  /** `rich` (default) or `classic`. */
  replies?: 'rich' | 'classic' | undefined;
  /** A conversation's own choice (`/settings`), over `replies`; undefined: the agent's. */
  repliesOf?: ((route: Route) => 'rich' | 'classic' | undefined) | undefined;
  logger: Logger;
  /** Time for the draft pacing and timers; default the system clock. */
  clock?: Clock | undefined;
  /** The run's knowledge of the server's newer parts (drafts' `keep_on_stop`). */
  serverParts?: ServerPartsState | undefined;
}

/** The reply factory's handle. */
export interface Replies {
  /** How a reply in `route` is shown now: a draft (private chats), rich edits (groups), or classic. */
  mode(route: Route): 'draft' | 'edit' | 'classic';
  /**
   * The stream of a turn's reply. A private chat's reply that owns no message yet is a draft; one that
   * does (its placeholder said "queued" or "waiting") is edited into the answer, as in a group, so that
   * message is neither stranded nor deleted. `opener`: the message that opened the turn (the drafts'
   * id, and what the answer replies to). `after`: the previous reply of the conversation; no message
   * call of this one is queued before it settles.
   */
  stream(
    row: Pick<TurnRow, 'turnId' | 'route'>,
    ids: readonly number[],
    opener?: number,
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

  const mode = (route: Route): 'draft' | 'edit' | 'classic' =>
    (options.repliesOf?.(route) ?? options.replies ?? 'rich') === 'classic' || missing
      ? 'classic'
      : route.chatId > 0
        ? 'draft'
        : 'edit';

  return {
    mode,
    stream(row, ids, opener, after) {
      const kind = mode(row.route);
      return createReply({
        mode: kind === 'draft' && ids.length > 0 ? 'edit' : kind,
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
