/**
 * The chat's notices of a running turn's API trouble (see `core/turns/turn-notice.ts` for which events they
 * are): one message a turn, sent on the first retry and edited on the next ones, deleted once the turn
 * succeeds, and then no longer the conversation's "Last error" in `/status` either.
 *
 * Owns its messages' ids, in memory: a notice the gateway forgets across a restart stays in the chat,
 * which is the behaviour of every notice before this module. Entries leave when their turn ends, or the
 * oldest first beyond {@link NOTICE_CAP} turns that never reported an end.
 */
import type { FrameOf, Logger } from '@switchyard/protocol';
import { threadParams } from '../../core/intake/route.js';
import { isTurnNotice, noticeAfterEnd, type TurnNoticeEvent } from '../../core/turns/turn-notice.js';
import type { LastErrors } from '../ops/last-errors.js';
import { type BotApi, errorText } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';

/** Turns whose notice is remembered at most. */
const NOTICE_CAP = 256;

/** What the notices need. */
export interface TurnNoticeOptions {
  api: Pick<BotApi, 'sendMessage' | 'editMessageText' | 'deleteMessage'>;
  courier: Pick<Courier, 'call'>;
  /** The conversations' last errors: a notice that passed is cleared there too. */
  lastErrors: LastErrors;
  logger: Logger;
}

/** The notices' handle. */
export interface TurnNotices {
  /** Shows `event` when it is a turn's passing API trouble; false (nothing done) for any other event. */
  show(event: FrameOf<'operator_event'>): boolean;
  /** The turn ended: a success takes its notice out of the chat and out of `/status`. */
  turnEnded(frame: Pick<FrameOf<'turn_ended'>, 'turnId' | 'outcome'>): void;
}

interface Notice {
  readonly event: TurnNoticeEvent;
  /** Every message the notice said, so `/status` forgets it only when it still shows one of them. */
  readonly said: string[];
  /** The notice's message id once sent; each later edit chains on it, so they go out in order. */
  message: Promise<number | undefined>;
}

/** Creates the notices; nothing starts until an event arrives. */
export function createTurnNotices(options: TurnNoticeOptions): TurnNotices {
  const { api, courier, lastErrors, logger } = options;
  const notices = new Map<string, Notice>();
  const failed = (what: string) => (error: unknown) => {
    logger.warn({ event: 'turn_notice_failed', what, error: errorText(error) });
    return undefined;
  };
  const text = (event: TurnNoticeEvent) => `⚠️ ${event.message}`;

  return {
    show(event) {
      if (!isTurnNotice(event)) return false;
      const { chatId } = event.route;
      const known = notices.get(event.turnId);
      if (known) {
        known.said.push(event.message);
        known.message = known.message.then((id) => {
          if (id === undefined) return undefined;
          const edit = () => api.editMessageText(chatId, id, text(event));
          return courier.call(chatId, edit, { key: `notice:${event.turnId}` }).then(
            () => id,
            (error: unknown) => failed('edit')(error) ?? id,
          );
        });
        return true;
      }
      const send = () => api.sendMessage(chatId, text(event), threadParams(event.route));
      const message = courier.call(chatId, send).then((sent) => sent?.message_id, failed('send'));
      notices.set(event.turnId, { event, said: [event.message], message });
      for (const oldest of notices.keys()) {
        if (notices.size <= NOTICE_CAP) break;
        notices.delete(oldest);
      }
      return true;
    },

    turnEnded(frame) {
      const notice = notices.get(frame.turnId);
      if (!notice) return;
      notices.delete(frame.turnId);
      if (noticeAfterEnd(frame.outcome) === 'keep') return;
      const { route } = notice.event;
      const shown = lastErrors.of(route);
      if (shown !== undefined && notice.said.includes(shown)) lastErrors.note(undefined, route);
      void notice.message.then((id) => {
        if (id === undefined) return;
        return courier
          .call(route.chatId, () => api.deleteMessage(route.chatId, id))
          .then(() => undefined, failed('delete'));
      });
    },
  };
}
