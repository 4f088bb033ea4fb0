/**
 * The pin ledger: which bot messages are pinned right now, kept in SQLite so that no pin outlives the
 * turn it belongs to, whatever happens to this process.
 *
 * Invariants (reference spec §4):
 * - I1: a pin is recorded (durably) before `pinChatMessage` is called.
 * - I10: a failed pin removes its record.
 * - I2/I3: an unpin is attempted once per recorded pin (with one retry after a second), and the record
 *   goes whatever the outcome; the card cadence guarantees it is asked for once per card.
 * - I4/I8: at boot, before traffic, recorded pins are unpinned and cleared, then each known chat's
 *   bot-authored pins are unpinned from the top down, stopping at the first pin a user made.
 * - Every pin, unpin and sweep step writes one structured log line (event, chat, message, turn,
 *   outcome, durationMs).
 */
import { type Clock, type Logger, systemClock } from '@switchyard/protocol';
import type { GatewayStore } from '../../store/store.js';
import { type BotApi, errorText, outcomeOf } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';

/** Names of the structured pin log events. */
export type PinEvent = 'pin' | 'unpin' | 'sweep-pin' | 'sweep-auth' | 'audit';

/** What the pin ledger needs. */
export interface PinsOptions {
  api: Pick<BotApi, 'pinChatMessage' | 'unpinChatMessage' | 'getChat'>;
  store: Pick<GatewayStore, 'addPin' | 'removePin' | 'listPins'>;
  courier: Courier;
  logger: Logger;
  /** Time for the pins' timestamps, durations and the retry's wait; default the system clock. */
  clock?: Clock;
  /** Wait before the single unpin retry; default 1 s. */
  unpinRetryMs?: number;
  /** Most bot pins unpinned per chat in one authored sweep (`getChat` shows only the top one). */
  maxPerChat?: number;
}

/** Result of the boot sweep. */
export interface SweepReport {
  recorded: number;
  botAuthored: number;
}

/** The pin ledger's operations. */
export interface Pins {
  /** Records then pins silently; false (record rolled back) when Telegram refused. */
  pin(chatId: number, messageId: number, turnId: string): Promise<boolean>;
  /** Unpins (one retry) and always drops the record; false when both attempts failed. */
  unpin(chatId: number, messageId: number, turnId: string): Promise<boolean>;
  /** The boot sweep: recorded pins, then bot-authored pins in `chatIds` (user pins are a barrier). */
  sweep(chatIds: readonly number[], botId: number): Promise<SweepReport>;
  /** Read-only: bot-authored pins on top of each chat that the ledger does not know (should be 0). */
  audit(chatIds: readonly number[], botId: number): Promise<number>;
}

/** Creates the ledger over the store and the chat lanes. */
export function createPins(options: PinsOptions): Pins {
  const { api, store, courier, logger } = options;
  const retryMs = options.unpinRetryMs ?? 1000;
  const clock = options.clock ?? systemClock;
  const maxPerChat = options.maxPerChat ?? 32;

  const log = (
    event: PinEvent,
    fields: { chatId: number; messageId?: number; turnId?: string; started: number; error?: unknown },
  ): void => {
    const line = {
      event,
      chatId: fields.chatId,
      messageId: fields.messageId,
      turnKey: fields.turnId,
      outcome: fields.error === undefined ? 'ok' : outcomeOf(fields.error),
      durationMs: clock.now() - fields.started,
      ...(fields.error === undefined ? {} : { error: errorText(fields.error) }),
    };
    if (fields.error === undefined) logger.info(line, 'pin-event');
    else logger.warn(line, 'pin-event');
  };

  // `high`: an unpin ends a card's pin, and must not wait behind the chat's queued replies (the courier
  // still paces it within the chat's budget).
  const unpinOnce = (chatId: number, messageId: number) =>
    courier.call(chatId, () => api.unpinChatMessage(chatId, messageId), { priority: 'closing' });

  return {
    async pin(chatId, messageId, turnId) {
      const started = clock.now();
      store.addPin({ chatId, messageId, turnId, pinnedAt: started });
      try {
        await courier.call(
          chatId,
          () => api.pinChatMessage(chatId, messageId, { disable_notification: true }),
          { priority: 'cosmetic' },
        );
        log('pin', { chatId, messageId, turnId, started });
        return true;
      } catch (error) {
        store.removePin(chatId, messageId);
        log('pin', { chatId, messageId, turnId, started, error });
        return false;
      }
    },

    async unpin(chatId, messageId, turnId) {
      const started = clock.now();
      try {
        await unpinOnce(chatId, messageId);
        log('unpin', { chatId, messageId, turnId, started });
        return true;
      } catch (first) {
        await clock.sleep(retryMs);
        try {
          await unpinOnce(chatId, messageId);
          log('unpin', { chatId, messageId, turnId, started });
          return true;
        } catch (error) {
          log('unpin', { chatId, messageId, turnId, started, error: error ?? first });
          return false;
        }
      } finally {
        store.removePin(chatId, messageId);
      }
    },

    async sweep(chatIds, botId) {
      const report: SweepReport = { recorded: 0, botAuthored: 0 };
      for (const pin of store.listPins()) {
        const started = clock.now();
        try {
          await unpinOnce(pin.chatId, pin.messageId);
          report.recorded++;
          log('sweep-pin', { chatId: pin.chatId, messageId: pin.messageId, turnId: pin.turnId, started });
        } catch (error) {
          // "message to unpin not found" means it is already gone: the record was stale, which is fine.
          log('sweep-pin', {
            chatId: pin.chatId,
            messageId: pin.messageId,
            turnId: pin.turnId,
            started,
            error,
          });
        } finally {
          store.removePin(pin.chatId, pin.messageId);
        }
      }
      const chats = new Set([...chatIds, ...store.listPins().map((p) => p.chatId)]);
      for (const chatId of chats) {
        for (let i = 0; i < maxPerChat; i++) {
          const started = clock.now();
          let top: { message_id: number; from?: { id: number } } | undefined;
          try {
            // getChat reads; it is not a message and does not spend the chat's budget.
            const chat = await api.getChat(chatId);
            top = (chat as { pinned_message?: typeof top } | undefined)?.pinned_message;
          } catch (error) {
            // An allowed user who never opened a chat with the bot: nothing can be pinned there.
            if (/chat not found/i.test(errorText(error))) {
              logger.info(
                { event: 'sweep-auth', chatId, outcome: 'no-chat', durationMs: clock.now() - started },
                'pin-event',
              );
            } else {
              log('sweep-auth', { chatId, started, error });
            }
            break;
          }
          // I8: a pin made by anyone else is a barrier; everything under it stays.
          if (!top || top.from?.id !== botId) break;
          try {
            await unpinOnce(chatId, top.message_id);
            report.botAuthored++;
            log('sweep-auth', { chatId, messageId: top.message_id, started });
          } catch (error) {
            log('sweep-auth', { chatId, messageId: top.message_id, started, error });
            break;
          }
        }
      }
      return report;
    },

    async audit(chatIds, botId) {
      const known = new Set(store.listPins().map((p) => `${p.chatId}:${p.messageId}`));
      let orphans = 0;
      for (const chatId of chatIds) {
        const started = clock.now();
        try {
          const chat = await api.getChat(chatId);
          const top = (chat as { pinned_message?: { message_id: number; from?: { id: number } } } | undefined)
            ?.pinned_message;
          if (top && top.from?.id === botId && !known.has(`${chatId}:${top.message_id}`)) orphans++;
          logger.info({ event: 'audit', chatId, orphans, durationMs: clock.now() - started }, 'pin-event');
        } catch (error) {
          log('audit', { chatId, started, error });
        }
      }
      return orphans;
    },
  };
}
