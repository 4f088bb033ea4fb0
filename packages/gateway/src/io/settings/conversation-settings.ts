/**
 * The conversation settings as the gateway reads them: the SQLite table (`store/conversation-settings.ts`)
 * mirrored in memory, so the places that read a setting on every frame (a reply's mode, whether the card
 * opens) cost no query. The mirror holds exactly the table's rows: it is loaded at creation and every
 * change goes through {@link ConversationSettingsService.set}, which writes the table first.
 */
import { conversationKey, type Route } from '@switchyard/protocol';
import {
  type ConversationSettings,
  effectiveSettings,
  type RepliesSetting,
  type StoredSettings,
} from '../../core/settings/settings.js';
import type { GatewayStore } from '../../store/store.js';

/** The agent's defaults a conversation without its own settings takes. */
export interface SettingsDefaults {
  /** The agent's `replies` (default `rich`). */
  replies: RepliesSetting;
  /** Whether long turns get a progress card (default true). */
  card: boolean;
}

/** Per-conversation settings, read and changed. */
export interface ConversationSettingsService {
  /** The settings that apply in `route` now. */
  get(route: Route): Pick<ConversationSettings, 'replies' | 'card'>;
  /** What `route` stored itself (no defaults). */
  stored(route: Route): StoredSettings;
  /** Stores `route`'s settings: durable when it returns. */
  set(route: Route, settings: StoredSettings): void;
}

/** Creates the service over the store's table. */
export function createConversationSettings(
  store: Pick<GatewayStore, 'allConversationSettings' | 'setConversationSettings'>,
  defaults: SettingsDefaults,
): ConversationSettingsService {
  const rows = store.allConversationSettings();
  const stored = (route: Route): StoredSettings => rows.get(conversationKey(route)) ?? {};
  return {
    get: (route) => effectiveSettings(stored(route), defaults),
    stored,
    set(route, settings) {
      store.setConversationSettings(route, settings);
      rows.set(conversationKey(route), { ...settings });
    },
  };
}
