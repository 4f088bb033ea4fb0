/**
 * The shell that edits inbound messages' markers, as the turn machine asks (`edit_marker`): one
 * `editMessageText` through the chat's courier lane, its outcome told back as `shown` (Telegram has
 * it), `gone` (it says that already, or can never be edited again) or `failed`.
 *
 * Invariant (kept by the machine, see `core/turns/turn-machine.ts`): a marker's due text is in the store
 * before its edit is tried and cleared only once an outcome here says `shown` or `gone`, so an edit lost
 * to a crash, a Telegram outage or a placeholder still in flight is made by a later sweep instead of
 * leaving "⏳ will be read" or "queued" beside an answered message.
 */
import type { Logger } from '@switchyard/protocol';
import type { MarkerOutcome, TurnAction } from '../../core/turns/turn-steps.js';
import { type BotApi, errorText } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';

/** What the marker edits need. */
export interface MarkerEditsOptions {
  api: Pick<BotApi, 'editMessageText'>;
  courier: Courier;
  logger: Logger;
}

/** Edits one marker; resolves with the outcome the machine is told. */
export type EditMarker = (action: TurnAction & { kind: 'edit_marker' }) => Promise<MarkerOutcome>;

/** Creates the marker edits' shell. */
export function createMarkerEdits(options: MarkerEditsOptions): EditMarker {
  const { api, courier, logger } = options;
  return async ({ chatId, messageId, text, due }) => {
    try {
      const done = await courier.call(chatId, () => api.editMessageText(chatId, messageId, text), {
        key: `ph:${messageId}`,
      });
      // `undefined`: a newer edit of the same message took this one's place in the chat's queue.
      return done === undefined ? 'failed' : 'shown';
    } catch (error) {
      const words = errorText(error);
      const gone = /not modified|not found|can't be edited/i.test(words);
      logger.warn({ event: 'placeholder_edit_failed', error: words, retry: due && !gone });
      return gone ? 'gone' : 'failed';
    }
  };
}
