/**
 * The shell that acknowledges inbound messages in their chats, as the turn machine decides
 * (`core/turns/arrival.ts` through `core/turns/turn-machine.ts`): it sends a placeholder message
 * (`send_placeholder`) or shows "Thinking…" as a draft (`thinking`), and tells the machine how that went.
 *
 * Crash safety: a placeholder goes out through the send journal, and the machine's answer to its id
 * (`placeholder_sent`: the placeholder's row, and the turn it opened naming it as its first message) is
 * written inside the transaction that ends the send, so a crash right after cannot resume that turn
 * without its placeholder. The actions of that answer run once the send has returned.
 */
import type { Logger } from '@switchyard/protocol';
import { threadParams } from '../../core/intake/route.js';
import type { TurnAction, TurnEvent, TurnStep } from '../../core/turns/turn-steps.js';
import type { Replies } from '../reply/replies.js';
import { errorText } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { SendJournal } from '../telegram/send-journal.js';

/** What the acknowledgements need. */
export interface ArrivalsOptions {
  courier: Courier;
  journal: Pick<SendJournal, 'send'>;
  replies: Pick<Replies, 'thinking'>;
  logger: Logger;
  /** Feeds an event to the machine and returns its step, applying the step's writes (not its actions). */
  decide(event: TurnEvent): TurnStep;
  /** Performs a step's actions (and arms its wake-up). */
  perform(step: TurnStep): void;
  now(): number;
}

/** The acknowledgements' handle. */
export interface Arrivals {
  /** Sends a placeholder; resolves once its send has ended and the machine knows how. */
  send(action: TurnAction & { kind: 'send_placeholder' }): Promise<void>;
  /** Shows "Thinking…" as a draft and tells the machine whether it went out. */
  thinking(action: TurnAction & { kind: 'thinking' }): void;
}

/** Creates the acknowledgements' shell. */
export function createArrivals(options: ArrivalsOptions): Arrivals {
  const { courier, journal, replies, logger } = options;
  return {
    async send(action) {
      const { inboundId, route, text, placeholderKind } = action;
      const chatId = route.chatId;
      let answer: TurnStep | undefined;
      try {
        const sent = await courier.call(
          chatId,
          () =>
            journal.send(
              chatId,
              text,
              {
                ...threadParams(route),
                reply_parameters: { message_id: action.replyTo, allow_sending_without_reply: true },
              },
              {
                owner: { kind: 'placeholder', inboundId, placeholderKind },
                adopt: (messageId) => {
                  answer = options.decide({
                    type: 'placeholder_sent',
                    inboundId,
                    messageId,
                    at: options.now(),
                  });
                },
              },
            ),
          { priority: 'prompt' },
        );
        if (sent === undefined && answer === undefined) throw new Error('the send was dropped');
      } catch (error) {
        if (answer === undefined)
          logger.warn({ event: 'placeholder_failed', chat: chatId, error: errorText(error) });
      }
      options.perform(answer ?? options.decide({ type: 'placeholder_failed', inboundId, at: options.now() }));
    },
    thinking(action) {
      const shown = replies.thinking(action.route, action.draftId);
      options.perform(
        options.decide({ type: 'thought', inboundId: action.inboundId, shown, at: options.now() }),
      );
    },
  };
}
