/**
 * Where a conversation lives in Telegram, decided in one place: the route of an inbound message, a button
 * press or a stopped draft; the lane key every per-conversation map and `sequentialize` use; and the
 * `message_thread_id` parameter that keeps a call inside its forum topic (or private-chat topic).
 *
 * Contract: a route has a `threadId` only for a topic message (`is_topic_message`). A reply inside a
 * plain group also carries a `message_thread_id` (the thread of replies), which is not a conversation of
 * its own; treating it as one would split a group into one conversation per reply thread.
 *
 * Pure: structural Telegram types only, so the cores can use it.
 */
import { conversationKey, type Route } from '@switchyard/protocol/common';

/** The fields of a Telegram message that say where it was sent. */
export interface MessagePlace {
  chat: { id: number };
  message_thread_id?: number | undefined;
  is_topic_message?: boolean | undefined;
}

/** The fields of a `stopped_message_generation` update (a draft's stop button). */
export interface StoppedPlace {
  chat: { id: number };
  message_thread_id?: number | undefined;
}

/** The conversation a message belongs to, where its answer goes. */
export function routeOfMessage(message: MessagePlace): Route {
  return message.is_topic_message && message.message_thread_id !== undefined
    ? { chatId: message.chat.id, threadId: message.message_thread_id }
    : { chatId: message.chat.id };
}

/** The conversation whose draft the user stopped (drafts carry their topic's id, if any). */
export function routeOfStoppedDraft(stopped: StoppedPlace): Route {
  return stopped.message_thread_id === undefined
    ? { chatId: stopped.chat.id }
    : { chatId: stopped.chat.id, threadId: stopped.message_thread_id };
}

/** The one key of a conversation for in-memory maps and lanes: protocol's `conversationKey`. */
export function laneKey(route: Route): string {
  return conversationKey(route);
}

/** The Bot API parameter that keeps a call in the route's topic; empty outside topics. */
export function threadParams(route: Route): { message_thread_id?: number } {
  return route.threadId === undefined ? {} : { message_thread_id: route.threadId };
}

/** The parts of an update that say which conversation it belongs to. */
export interface UpdatePlace {
  message?: MessagePlace | undefined;
  callback_query?: { message?: MessagePlace | undefined } | undefined;
  stopped_message_generation?: StoppedPlace | undefined;
}

/**
 * The lane (conversation) an update belongs to, for ordering per conversation; undefined for updates of
 * no conversation (they run unordered).
 */
export function laneOfUpdate(update: UpdatePlace): string | undefined {
  const stopped = update.stopped_message_generation;
  if (stopped) return laneKey(routeOfStoppedDraft(stopped));
  const message = update.message ?? update.callback_query?.message;
  return message ? laneKey(routeOfMessage(message)) : undefined;
}
