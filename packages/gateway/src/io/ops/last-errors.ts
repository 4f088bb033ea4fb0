/**
 * The last error of each conversation, for its own `/status`, and the agent's last error that belongs
 * to no conversation, for operators (`Gateway.status()` without a route; the alert chat is told by the
 * caller). One conversation's error is never shown in another: it may hold another process's stderr.
 *
 * Entries leave when a conversation's error is cleared, or the oldest first beyond `max` conversations.
 */
import { conversationKey, type Route } from '@switchyard/protocol';

/** The last errors, per conversation and agent-wide. */
export interface LastErrors {
  /** Records `message` (or clears with `undefined`) for `route`'s conversation, or agent-wide without one. */
  note(message: string | undefined, route?: Route): void;
  /** The conversation's last error, or the agent-wide one when `route` is absent. */
  of(route?: Route): string | undefined;
}

/** Creates the table; at most `max` conversations are remembered. */
export function createLastErrors(max = 1000): LastErrors {
  const byConversation = new Map<string, string>();
  let agentWide: string | undefined;
  return {
    note(message, route) {
      if (!route) {
        agentWide = message;
        return;
      }
      const key = conversationKey(route);
      byConversation.delete(key);
      if (message === undefined) return;
      byConversation.set(key, message);
      for (const oldest of byConversation.keys()) {
        if (byConversation.size <= max) break;
        byConversation.delete(oldest);
      }
    },
    of(route) {
      return route ? byConversation.get(conversationKey(route)) : agentWide;
    },
  };
}
