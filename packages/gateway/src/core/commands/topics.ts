/**
 * What `/new` does, pure: in a private chat whose bot has topics (Bot API 9.3, `has_topics_enabled` in
 * `getMe`) it opens a new topic for a fresh session and leaves the conversation it was sent in as it
 * was — every topic is a conversation of its own (`core/intake/route.ts`). Anywhere else `/new` is `/clear`:
 * the conversation it was sent in starts anew. The shell (`io/commands/topic-opener.ts`) performs it.
 */
import type { Route } from '@switchyard/protocol/common';

/** Where `/new` takes the chat: a new topic, or a fresh start of this conversation in place. */
export type NewConversation = { kind: 'topic'; name: string } | { kind: 'clear' };

/** Longest topic name Telegram takes. */
export const TOPIC_NAME_LIMIT = 128;

/**
 * Decides `/new` for `route`. `topicsEnabled`: the bot has topics in private chats; `at`: the time as an
 * ISO string (the topic's name carries it, so the chat's topics list tells them apart).
 */
export function newConversation(route: Route, topicsEnabled: boolean, at: string): NewConversation {
  if (!topicsEnabled || route.chatId <= 0) return { kind: 'clear' };
  return { kind: 'topic', name: topicName(at) };
}

/** A new topic's name: "New conversation · 2026-12-01 23:05 UTC" (from an ISO time). */
export function topicName(at: string): string {
  const stamp = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(at);
  const name = stamp ? `New conversation · ${stamp[1]} ${stamp[2]} UTC` : 'New conversation';
  return name.slice(0, TOPIC_NAME_LIMIT);
}

/** What the chat is told. */
export const TOPIC_TEXTS = {
  /** In the new topic, its first message. */
  welcome: 'A fresh conversation: write here. The earlier one stays in its topic, as it was.',
  /** Where `/new` was sent. */
  opened: (name: string): string =>
    `Opened a new topic, “${name}”, for a fresh conversation; this one stays as it was.`,
  /** Telegram refused the topic: `/new` falls back to starting this conversation anew. */
  refused: (reason: string): string =>
    `I could not open a new topic (${reason}), so this conversation starts anew here instead.`,
} as const;
