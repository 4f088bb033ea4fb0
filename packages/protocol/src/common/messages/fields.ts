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

/** A lane's name: `webhook-<hook>` or `schedule-<id>` ({@link automationLane}). */
const LANE = /^(webhook|schedule)-[A-Za-z0-9_-]{1,100}$/;

/**
 * Where a turn's output goes in Telegram: a chat, and a forum topic inside it when there is one. A
 * `lane` names a conversation of its own in that chat or topic: the session a webhook or schedule runs
 * in (issue 27), apart from the people's conversation there, with its own Claude session and mode and
 * none of that conversation's "always allow" rules. Telegram never sees a lane: its messages go to the
 * chat and topic.
 */
export const routeSchema = z.object({
  chatId,
  threadId: z.number().int().optional(),
  lane: z.string().regex(LANE).optional(),
});
/** Where a turn's output goes: a chat, a forum topic in it, and a lane of automation in that. */
export type Route = z.infer<typeof routeSchema>;

/**
 * The id of the conversation a route belongs to: the chat, or one topic of a forum (`<chatId>` or
 * `<chatId>:<threadId>`), and a lane in it (`…~<lane>`). Each conversation is its own Claude session;
 * frames that belong to one carry its route, and this is the one place a route becomes a key.
 */
export function conversationKey(route: Route): string {
  const place = route.threadId === undefined ? `${route.chatId}` : `${route.chatId}:${route.threadId}`;
  return route.lane === undefined ? place : `${place}~${route.lane}`;
}

/**
 * Whether a conversation's session reads untrusted input: a webhook's lane, which is given every
 * delivery of its hook. The mark is its route, so it is stored wherever the route is (the bridge's
 * snapshot, the gateway's turns) and lasts as long as the session does.
 */
export function readsUntrustedInput(route: Route): boolean {
  return route.lane?.startsWith('webhook-') === true;
}

/**
 * The lane a webhook's or schedule's runs take (`webhook-<hook>`, `schedule-<id>`): one session per hook
 * and per schedule. A name outside the lane alphabet keeps its safe characters and gains a hash of the
 * whole, so two names never share a lane.
 */
export function automationLane(kind: 'webhook' | 'schedule', name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80);
  if (safe === name && safe.length > 0) return `${kind}-${safe}`;
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (Math.imul(hash, 31) + name.charCodeAt(i)) | 0;
  return `${kind}-${safe}_${(hash >>> 0).toString(36)}`;
}
