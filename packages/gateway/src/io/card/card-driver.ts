/**
 * The one module that talks to the Bot API about the progress card. It feeds turn frames to the card
 * package's cadence (a pure state machine), performs the actions it returns — send, edit, pin, unpin —
 * through the chat's courier lane and the pin ledger, and reports each outcome back.
 *
 * The cadence decides *when* (show delay, coalescing, heartbeat, zombie ceiling, one pin per card, one
 * unpin per pin); this module decides only *how*. Pin failures degrade to an unpinned live card: the
 * cadence is told `pin_failed` and the user sees nothing wrong.
 */
import {
  type ActionResult,
  type AdoptedCard,
  type CadenceOptions,
  type CadenceStep,
  type CardEvent,
  createCadence,
  isEnded,
  runningSubagents,
} from '@switchyard/card';
import {
  type AppFrame,
  type Clock,
  createWakeTimer,
  type Logger,
  type Route,
  systemClock,
} from '@switchyard/protocol';
import { laneKey, threadParams } from '../../core/intake/route.js';
import { type BotApi, errorText, isGone, isNotModified } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { SendJournal } from '../telegram/send-journal.js';
import type { Pins } from './pins.js';

/** Timing of the card; see the card package's `CadenceOptions`. */
export type CardOptions = Omit<CadenceOptions<Route>, 'laneKey'>;

/** What the card driver needs. */
export interface CardDriverOptions {
  api: Pick<BotApi, 'sendMessage' | 'editMessageText'>;
  /**
   * Sends a card as its turn's (see `io/telegram/send-journal.ts`), so a card whose send a crash left
   * unresolved is found and adopted at boot; without it cards go out through `api.sendMessage`.
   */
  journal?: Pick<SendJournal, 'send'>;
  courier: Courier;
  pins: Pins;
  logger: Logger;
  card?: CardOptions;
  /**
   * Told when a card message exists for a turn, and (`undefined`) when it closed: the turn record keeps
   * the id exactly while the card may still need its final render. With `journal`, called inside the
   * transaction that ends the send.
   */
  onCardMessage?(turnId: string, messageId: number | undefined): void;
  /** Time for the cards' events and the one wake-up timer; default the system clock. */
  clock?: Clock;
  /**
   * Whether a turn in `route` gets a card (`/settings`; default yes): asked when a turn's first event
   * would open its card. A card already open goes on to its end whatever the setting says later.
   */
  cardShown?(route: Route): boolean;
}

/** A card a previous process left open (sent, not closed), to be taken over; see {@link CardDriver.adopt}. */
export type LeftOpenCard = Omit<AdoptedCard<Route>, 'ended'> & {
  /** How its turn ended, when it ended while nobody followed the card. */
  ended?: { outcome: string; error?: string | undefined };
};

/** The card driver's handle. */
export interface CardDriver {
  /** Maps a bridge frame to a card event, if it is one the card shows. */
  frame(route: Route, turnId: string, frame: AppFrame): void;
  /**
   * Takes over cards a previous process left open, oldest first: each is edited, pinned and closed from
   * now on as if this driver had sent it, so none stays "working" or "waiting" after a restart.
   */
  adopt(cards: readonly LeftOpenCard[]): void;
  /** Live cards, for `/status` and `/pins`. */
  live(): { turnId: string; route: Route; messageId: number | undefined; pinned: boolean; stage: string }[];
  /** Stops the timer; in-flight calls finish on their own. */
  stop(): void;
}

/** Turns a protocol frame into the card's event, or undefined for frames the card ignores. */
export function toCardEvent(frame: AppFrame, at: number): CardEvent | undefined {
  switch (frame.type) {
    case 'turn_started':
      return { type: 'turn_started', at, request: frame.request };
    case 'thinking':
      return { type: 'thinking', at, text: frame.text };
    case 'text':
      return { type: 'text', at, text: frame.text };
    case 'tool_started':
    case 'tool_finished':
    case 'subagent_started':
    case 'subagent_tool_started':
    case 'subagent_tool_finished':
    case 'subagent_text':
    case 'subagent_finished':
    case 'turn_ended':
      return { ...frame, at } as CardEvent;
    case 'permission_request':
      return {
        type: 'permission_waiting',
        at,
        requestId: frame.requestId,
        toolName: frame.toolName,
        summary: frame.summary,
      };
    case 'question':
      return { type: 'permission_waiting', at, requestId: frame.requestId };
    case 'prompt_closed':
      return { type: 'permission_answered', at, requestId: frame.requestId };
    default:
      return undefined;
  }
}

/** The courier key of a card's edits; one is in flight at a time, so the key never coalesces two. */
const editKey = (cardId: string): string => `card:${cardId}`;

/** Creates the driver; it starts nothing until the first frame arrives. */
export function createCardDriver(options: CardDriverOptions): CardDriver {
  const { api, courier, pins, logger } = options;
  const clock = options.clock ?? systemClock;
  const now = (): number => clock.now();
  const cadence = createCadence<Route>({
    ...options.card,
    laneKey,
  });

  const perform = (step: CadenceStep<Route>): void => {
    for (const action of step.actions) {
      if (action.kind === 'closed') {
        if (action.messageId !== undefined) options.onCardMessage?.(action.turnId, undefined);
        logger.info({
          event: 'card_closed',
          chat: action.route.chatId,
          turn: action.turnId,
          stage: action.stage,
        });
        // No completion notice, in topics either: the card itself was edited to "✅ Done", and the
        // reply is the turn's last message; a third message would say it again.
        continue;
      }
      void run(action).then((result) => perform(cadence.report(action.cardId, result, now())));
    }
    // A closing card's live edit may still wait as a streamed call behind the chat's replies, and the
    // cadence issues the final edit and the unpin only after it: raise it to theirs. (The cadence marks a
    // card whose turn ended as closing only once that edit is reported, hence the second test.)
    for (const card of cadence.cards()) {
      if (card.closing || (isEnded(card.state) && runningSubagents(card.state) === 0))
        courier.promote(card.route.chatId, editKey(card.cardId), 'closing');
    }
    wake.arm(step.wakeAt);
  };

  const run = async (
    action: Exclude<Parameters<typeof perform>[0]['actions'][number], { kind: 'closed' }>,
  ): Promise<ActionResult> => {
    const chatId = action.route.chatId;
    const thread = threadParams(action.route);
    switch (action.kind) {
      case 'send':
        try {
          const other = { ...thread, parse_mode: 'HTML', disable_notification: true } as const;
          const record = (id: number) => options.onCardMessage?.(action.turnId, id);
          const journal = options.journal;
          const sent = await courier.call(
            chatId,
            () =>
              journal
                ? journal.send(chatId, action.html, other, {
                    owner: { kind: 'card', turnId: action.turnId },
                    adopt: record,
                  })
                : api.sendMessage(chatId, action.html, other),
            // The card is cosmetic: a turn's answer and its prompts go before it (`io/telegram/courier.ts`).
            { priority: 'cosmetic' },
          );
          if (!sent) return { kind: 'send_failed' };
          if (!journal) record(sent.message_id);
          return { kind: 'sent', messageId: sent.message_id };
        } catch (error) {
          logger.warn({
            event: 'card_send_failed',
            chat: chatId,
            turn: action.turnId,
            error: errorText(error),
          });
          return { kind: 'send_failed' };
        }
      case 'edit':
        try {
          // The cadence keeps one action per card in flight, so there is never a stale edit to coalesce.
          await courier.call(
            chatId,
            () => api.editMessageText(chatId, action.messageId, action.html, { parse_mode: 'HTML' }),
            // The key lets a closing card raise a live edit still queued (see `perform`).
            // The final edit precedes the unpin (the cadence keeps one action per card in flight), so it
            // shares the unpin's priority: otherwise the unpin would wait behind queued cosmetics after all.
            // A stage change ("Waiting for your answer" → "Working" after Allow) goes at the same rank: a
            // header claiming a wait the user already ended misleads.
            { priority: action.final || action.urgent ? 'closing' : 'stream', key: editKey(action.cardId) },
          );
          return { kind: 'edited' };
        } catch (error) {
          if (isNotModified(error)) return { kind: 'edited' };
          logger.warn({
            event: 'card_edit_failed',
            chat: chatId,
            turn: action.turnId,
            error: errorText(error),
          });
          return { kind: 'edit_failed', gone: isGone(error) };
        }
      case 'pin':
        return (await pins.pin(chatId, action.messageId, action.turnId))
          ? { kind: 'pinned' }
          : { kind: 'pin_failed' };
      case 'unpin':
        return (await pins.unpin(chatId, action.messageId, action.turnId))
          ? { kind: 'unpinned' }
          : { kind: 'unpin_failed' };
    }
  };

  const wake = createWakeTimer(clock, (at) => perform(cadence.tick(at)));

  return {
    frame(route, turnId, frame) {
      const event = toCardEvent(frame, now());
      if (!event) return;
      if (options.cardShown && !options.cardShown(route) && !cadence.cards().some((c) => c.turnId === turnId))
        return;
      perform(cadence.event(route, turnId, event));
    },
    adopt(cards) {
      const at = now();
      const adopted = cards.map(({ ended, ...card }): AdoptedCard<Route> => {
        if (!ended) return card;
        const outcome =
          ended.outcome === 'error' || ended.outcome === 'interrupted' ? ended.outcome : 'success';
        return { ...card, ended: { type: 'turn_ended', at, outcome, error: ended.error } };
      });
      if (adopted.length > 0) perform(cadence.adopt(adopted, at));
    },
    live() {
      return cadence.cards().map((c) => ({
        turnId: c.turnId,
        route: c.route,
        messageId: c.messageId,
        pinned: c.pinned,
        stage: c.stage,
      }));
    },
    stop() {
      wake.stop();
    },
  };
}
