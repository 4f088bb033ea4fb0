/**
 * Which kind of reply a turn gets, and the one place that builds it: classic (`stream.ts`) or rich
 * (`rich-reply.ts`: a draft in a private chat, rich edits of a placeholder elsewhere). Owns the two
 * pieces of state every rich reply of the gateway shares: the per-chat draft bucket, and the fact —
 * learnt once, from a "method not found" — that the Bot API server has no rich messages.
 */
import type { Logger, Route } from '@switchyard/protocol';
import { type BotApi, errorText } from './bot-api.js';
import { threadParams } from './core/route.js';
import type { Courier } from './courier.js';
import { createDraftPacer, createRichReply, type RichReply } from './rich-reply.js';
import type { SendJournal } from './send-journal.js';
import type { GatewayStore, TurnRow } from './store.js';
import { createReplyStream, type ReplyStream } from './stream.js';

/** What the factory needs. */
export interface RepliesOptions {
  api: Pick<BotApi, 'editMessageText' | 'deleteMessage' | 'sendMessageDraft' | 'sendRichMessageDraft'>;
  journal: Pick<SendJournal, 'send' | 'sendRich'>;
  courier: Courier;
  store: Pick<GatewayStore, 'setTurnMessages'>;
  /** `rich` (default) or `classic`. */
  replies?: 'rich' | 'classic' | undefined;
  logger: Logger;
}

/** The reply factory's handle. */
export interface Replies {
  /** How a reply in `route` is shown now: a draft (private chats), rich edits (groups), or classic. */
  mode(route: Route): 'draft' | 'edit' | 'classic';
  /**
   * The stream of a turn's reply. A private chat's reply that owns no message yet is a draft; one that
   * does (its placeholder said "queued" or "waiting") is edited into the answer, as in a group, so that
   * message is neither stranded nor deleted. `opener`: the message that opened the turn (the drafts'
   * id, and what the answer replies to).
   */
  stream(
    row: Pick<TurnRow, 'turnId' | 'route'>,
    ids: readonly number[],
    opener?: number,
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
  const pacer = createDraftPacer();
  let missing = false;

  const mode = (route: Route): 'draft' | 'edit' | 'classic' =>
    (options.replies ?? 'rich') === 'classic' || missing ? 'classic' : route.chatId > 0 ? 'draft' : 'edit';

  return {
    mode,
    stream(row, ids, opener) {
      const common = {
        api,
        journal,
        courier,
        route: row.route,
        key: row.turnId,
        messageIds: ids,
        onMessages: (next: readonly number[]) => store.setTurnMessages(row.turnId, next),
        logger,
      };
      const kind = mode(row.route);
      if (kind === 'classic') return createReplyStream(common);
      return createRichReply({
        ...common,
        mode: kind === 'draft' && ids.length === 0 ? 'draft' : 'edit',
        pacer,
        draftId: opener ?? draftIdOf(row.turnId),
        replyTo: opener,
        onMissing: () => {
          if (!missing)
            logger.warn(
              { event: 'rich_missing' },
              'the Bot API server lacks rich messages (method not found): classic replies from now on',
            );
          missing = true;
        },
      });
    },
    thinking(route, draftId) {
      const now = Date.now();
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
