/**
 * The field schemas and limits that frames of every family share, and the route: where a turn's output
 * goes, and the one place a route becomes a conversation's key.
 */
import { z } from 'zod';

/** A key, id or name on the wire: non-empty, at most 200 characters. */
export const id = z.string().min(1).max(200);
/** A Telegram chat id. */
export const chatId = z.number().int();
/** A frame's sequence number, stamped by the channel. */
export const seq = z.number().int().positive();
/** A text field: at most 1,000,000 characters. */
export const text = z.string().max(1_000_000);
// A question's limits bound its answer's: the answer is keyed by the question and may join every label.
/** A question's text, at most. */
export const QUESTION_MAX = 4000;
/** An option's label, at most. */
export const LABEL_MAX = 500;
/** Options of one question, at most. */
export const OPTIONS_MAX = 20;
/** An answer, at most: every label joined. */
export const ANSWER_MAX = OPTIONS_MAX * (LABEL_MAX + 2);

/** Every turn event names its turn; the gateway maps turns to Telegram messages. */
export const turnId = id;

/** Where a turn's output goes in Telegram: a chat, and a forum topic inside it when there is one. */
export const routeSchema = z.object({ chatId, threadId: z.number().int().optional() });
/** Where a turn's output goes: a chat, and a forum topic in it. */
export type Route = z.infer<typeof routeSchema>;

/**
 * The id of the conversation a route belongs to: the chat, or one topic of a forum (`<chatId>` or
 * `<chatId>:<threadId>`). Each conversation is its own Claude session; frames that belong to one carry
 * its route, and this is the one place a route becomes a key.
 */
export function conversationKey(route: Route): string {
  return route.threadId === undefined ? `${route.chatId}` : `${route.chatId}:${route.threadId}`;
}
