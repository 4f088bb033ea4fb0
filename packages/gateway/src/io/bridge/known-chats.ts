/**
 * The chats this agent's bridge may address. The bridge runs as the agent's user, and so does Claude:
 * a compromised Claude can at most act as its own agent's bridge, and this keeps even that inside the
 * agent's own conversations — a frame that names a chat the agent never talked in (a turn, a prompt,
 * a warning, a waiting notice) is dropped and logged, never sent to Telegram.
 *
 * Known: the allowlisted users' private chats, `allowChats`, and every chat an allowed user's message
 * was accepted from (kept durably in the store's `meta`, so it survives restarts; bounded).
 */
import type { Route } from '@switchyard/protocol';
import type { GatewayStore } from '../../store/store.js';

/** How many chats are remembered (the oldest are forgotten first). */
const KNOWN_CHATS_KEPT = 10_000;
const META_KEY = 'known_chats';

/** The known chats; see the module comment. */
export interface KnownChats {
  /** An allowed user's message was accepted from this chat. */
  note(chatId: number): void;
  /** Whether frames may address this route. */
  allows(route: Route): boolean;
}

/** Creates the set over the open store. */
export function createKnownChats(
  store: Pick<GatewayStore, 'getMeta' | 'setMeta'>,
  seed: readonly number[],
): KnownChats {
  const fixed = new Set(seed);
  let learned: number[] | undefined;
  const load = (): number[] => {
    if (!learned) {
      const raw = store.getMeta(META_KEY);
      learned = raw ? (JSON.parse(raw) as number[]) : [];
    }
    return learned;
  };
  return {
    note(chatId) {
      if (fixed.has(chatId)) return;
      const list = load();
      if (list.includes(chatId)) return;
      list.push(chatId);
      if (list.length > KNOWN_CHATS_KEPT) list.splice(0, list.length - KNOWN_CHATS_KEPT);
      store.setMeta(META_KEY, JSON.stringify(list));
    },
    allows(route) {
      return fixed.has(route.chatId) || load().includes(route.chatId);
    },
  };
}
