/**
 * The `conversation_settings` table: what `/settings` changed for one conversation (replies `rich` /
 * `classic`, the progress card on or off), keyed by the conversation's key (`conversationKey`). A
 * conversation without a row, or a field left NULL, takes the agent's defaults (`core/settings/settings.ts`).
 * Rows stay: a conversation's settings are kept for as long as the gateway's state is.
 */
import { conversationKey, type Route } from '@switchyard/protocol';
import type { StoredSettings } from '../core/settings/settings.js';
import type { Db } from './database.js';

/** Per-conversation settings. */
export interface ConversationSettingsTable {
  /** Every conversation's stored settings, by conversation key (read once, at start). */
  allConversationSettings(): Map<string, StoredSettings>;
  /** Replaces a conversation's stored settings. */
  setConversationSettings(route: Route, settings: StoredSettings): void;
}

/** The table over `db`. */
export function createConversationSettingsTable(db: Db, now: () => number): ConversationSettingsTable {
  const q = {
    all: db.prepare<[], { conversation: string; replies: string | null; card: number | null }>(
      'SELECT conversation, replies, card FROM conversation_settings',
    ),
    set: db.prepare(
      `INSERT INTO conversation_settings (conversation, replies, card, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(conversation) DO UPDATE SET replies = excluded.replies, card = excluded.card,
         updated_at = excluded.updated_at`,
    ),
  };
  return {
    allConversationSettings: () =>
      new Map(
        q.all.all().map((row) => [
          row.conversation,
          {
            ...(row.replies === 'rich' || row.replies === 'classic' ? { replies: row.replies } : {}),
            ...(row.card === null ? {} : { card: row.card === 1 }),
          },
        ]),
      ),
    setConversationSettings: (route, s) => {
      q.set.run(
        conversationKey(route),
        s.replies ?? null,
        s.card === undefined ? null : s.card ? 1 : 0,
        now(),
      );
    },
  };
}
