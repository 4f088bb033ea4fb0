/**
 * The shell that shows inbound messages' states (`core/turns/reaction.ts`) as the turn machine asks
 * (`react`): a `setMessageReaction` through the chat's courier lane, as a cosmetic call that spends the
 * chat's reaction window (not its message slots) and is dropped unrun when the message has moved on to
 * another state before its turn came. A call that failed (not refused) is tried again after `retryMs`, up to
 * {@link REACTION_TRIES} times while the message still wants that state, so a passing refusal never
 * leaves ✍ beside an answered message. Reactions are not kept across a restart: they are cosmetic.
 *
 * A chat that refuses reactions (`REACTION_INVALID`, learnt from the first refusal and kept for the
 * process's life) shows them in ONE marker message per run of messages instead (`markerStep`): sent
 * once, as a reply to the first message it covers, and edited in place, each edit reading the newest
 * text when it goes out (so a burst of changes is one edit).
 */
import { type Clock, type Logger, type Route, systemClock } from '@switchyard/protocol';
import { laneKey, threadParams } from '../../core/intake/route.js';
import {
  allRead,
  type LaneMarker,
  markerStep,
  markerText,
  REACTION_EMOJI,
  type ReactionState,
} from '../../core/turns/reaction.js';
import { type BotApi, errorText, isGone, isNotModified, isReactionRefused } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';

/** Reaction slots a passing state (👀, ✍) leaves free in the chat's window for final ones (👌). */
export const PASSING_LEAVE = 8;

/** How often a reaction is tried in all. */
export const REACTION_TRIES = 3;

/** What the reactions need. */
export interface ReactionsOptions {
  api: Pick<BotApi, 'setMessageReaction' | 'sendMessage' | 'editMessageText'>;
  courier: Courier;
  logger: Logger;
  /** How long after a failed reaction it is tried again; default 15 s. */
  retryMs?: number;
  /** Time for the retries; default the system clock. */
  clock?: Pick<Clock, 'setTimeout'>;
}

/** The reactions' handle. */
export interface Reactions {
  /** Shows that message `messageId` in `route` is now in `state`. */
  show(route: Route, messageId: number, state: ReactionState): void;
  /** Whether `chatId` was found to refuse the bot's reactions. */
  refuses(chatId: number): boolean;
}

/** A conversation's fallback marker: what it covers, its message once sent, and what that shows. */
interface Marker {
  state: LaneMarker;
  messageId: number | 'sending' | undefined;
  shown: string | undefined;
}

/** Creates the reactions' shell. */
export function createReactions(options: ReactionsOptions): Reactions {
  const { api, courier, logger } = options;
  const clock = options.clock ?? systemClock;
  const retryMs = options.retryMs ?? 15_000;
  /** `chat:message` → the state last asked for; an entry leaves once its call has settled. */
  const wanted = new Map<string, ReactionState>();
  const refused = new Set<number>();
  const markers = new Map<string, Marker>();
  /** Keys whose failed reaction waits to be tried again (their `wanted` entry stays). */
  const retrying = new Set<string>();

  const toMarker = (route: Route, messageId: number, state: ReactionState): void => {
    const key = laneKey(route);
    const known = markers.get(key);
    const step = markerStep(known?.state, messageId, state);
    if (!step.marker) return;
    const marker: Marker =
      step.opened || !known ? { state: step.marker, messageId: undefined, shown: undefined } : known;
    marker.state = step.marker;
    markers.set(key, marker);
    flushMarker(route, key, marker);
  };

  const flushMarker = (route: Route, key: string, marker: Marker): void => {
    const chatId = route.chatId;
    const text = markerText(marker.state);
    const done = () => {
      // A marker whose messages are all read will not change again: the next run opens a new one.
      if (markers.get(key) === marker && allRead(marker.state) && marker.shown === markerText(marker.state))
        markers.delete(key);
    };
    if (marker.messageId === 'sending') return; // the send's end flushes the newest text
    if (marker.messageId === undefined) {
      marker.messageId = 'sending';
      const replyTo = marker.state.covers[0]?.messageId;
      void courier
        .call(
          chatId,
          () =>
            api.sendMessage(chatId, text, {
              ...threadParams(route),
              disable_notification: true,
              ...(replyTo === undefined
                ? {}
                : { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }),
            }),
          { priority: 'cosmetic' },
        )
        .then((sent) => {
          marker.messageId = sent?.message_id;
          marker.shown = sent ? text : undefined;
          if (sent && marker.shown !== markerText(marker.state)) flushMarker(route, key, marker);
          else done();
        })
        .catch((error: unknown) => {
          marker.messageId = undefined;
          logger.warn({ event: 'marker_send_failed', chat: chatId, error: errorText(error) });
          if (markers.get(key) === marker) markers.delete(key);
        });
      return;
    }
    const id = marker.messageId;
    void courier
      .call(
        chatId,
        async () => {
          const newest = markerText(marker.state);
          await api.editMessageText(chatId, id, newest).catch((error: unknown) => {
            if (!isNotModified(error)) throw error;
          });
          marker.shown = newest;
        },
        { priority: 'cosmetic', key: `mk:${key}`, stale: () => marker.shown === markerText(marker.state) },
      )
      .then(done)
      .catch((error: unknown) =>
        logger.warn({ event: 'marker_edit_failed', chat: chatId, error: errorText(error) }),
      );
  };

  const react = (route: Route, messageId: number, state: ReactionState, tries: number): void => {
    const chatId = route.chatId;
    if (refused.has(chatId)) {
      toMarker(route, messageId, state);
      return;
    }
    const key = `${chatId}:${messageId}`;
    void courier
      .call(
        chatId,
        () => api.setMessageReaction(chatId, messageId, [{ type: 'emoji', emoji: REACTION_EMOJI[state] }]),
        {
          // A final state (👌) goes first and may spend the whole window; one on the way to it leaves
          // half the window free, so a burst's passing states never hold the final ones back.
          priority: state === 'read' ? 'cosmetic' : 'stream',
          spends: 'reaction',
          ...(state === 'read' ? {} : { leave: PASSING_LEAVE }),
          key: `re:${key}`,
          // Moved on before its turn came: the newer state's call shows it (it took this one's key).
          stale: () => wanted.get(key) !== state,
        },
      )
      .catch((error: unknown) => {
        if (isReactionRefused(error)) {
          if (!refused.has(chatId)) logger.info({ event: 'reactions_refused', chat: chatId });
          refused.add(chatId);
          // The newest state of this message goes to the marker; later ones go there directly.
          toMarker(route, messageId, wanted.get(key) ?? state);
          return;
        }
        const again = tries < REACTION_TRIES && !isGone(error) && wanted.get(key) === state;
        logger.warn({ event: 'reaction_failed', chat: chatId, error: errorText(error), retry: again });
        if (again) {
          clock.setTimeout(() => {
            if (wanted.get(key) === state) react(route, messageId, state, tries + 1);
          }, retryMs);
          retrying.add(key);
        }
      })
      .finally(() => {
        if (retrying.delete(key)) return;
        if (wanted.get(key) === state) wanted.delete(key);
      });
  };

  return {
    refuses: (chatId) => refused.has(chatId),
    show(route, messageId, state) {
      if (refused.has(route.chatId)) {
        toMarker(route, messageId, state);
        return;
      }
      wanted.set(`${route.chatId}:${messageId}`, state);
      react(route, messageId, state, 1);
    },
  };
}
