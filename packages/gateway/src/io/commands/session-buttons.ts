/**
 * The server side of the `/sessions` buttons. A Stop or Reset button's callback data is only a random
 * token (`ss:<token>`); what it does — the action, the conversation it acts on, and the chat it was shown
 * in — is kept here, so callback data that names a conversation itself (a forged `ss:reset:<chatId>`)
 * does nothing, and a token is honoured only from the chat (and topic) whose `/sessions` list carried it.
 *
 * Tokens live in memory (`io/telegram/button-tokens.ts`): each leaves after {@link SESSION_BUTTON_TTL_MS}, or
 * when more than {@link MAX_SESSION_BUTTONS} are kept (the oldest first), or with the process; a press on a
 * token that left is told the button expired.
 */
import type { Route } from '@switchyard/protocol';
import type { SessionAction } from '../../core/commands/command-texts.js';
import { createButtonTokens } from '../telegram/button-tokens.js';

/** Callback data of `/sessions` buttons starts with this; the rest is the token. */
export const SESSION_BUTTON_PREFIX = 'ss:';

/** How long a `/sessions` list's buttons keep working. */
export const SESSION_BUTTON_TTL_MS = 60 * 60_000;

/** Tokens kept at most (ten buttons' worth of twenty lists). */
export const MAX_SESSION_BUTTONS = 400;

/** Said to a press on a button whose token is gone, or never was one. */
export const SESSION_BUTTON_EXPIRED = 'This button has expired: send /sessions again.';

/** The tokens behind the `/sessions` buttons. */
export interface SessionButtons {
  /** A new token for `action` on `target`, pressable in `shownIn`'s chat; returns its callback data. */
  issue(action: SessionAction, target: Route, shownIn: Route): string;
  /**
   * The press's action and target, or `undefined` when the token is unknown, expired or from another chat
   * or topic.
   */
  resolve(data: string, from: Route): { action: SessionAction; route: Route } | undefined;
}

/** Creates the token table; `now` reads the gateway's clock (ms since the epoch). */
export function createSessionButtons(now: () => number): SessionButtons {
  return createButtonTokens<SessionAction>(SESSION_BUTTON_PREFIX, now, {
    ttlMs: SESSION_BUTTON_TTL_MS,
    max: MAX_SESSION_BUTTONS,
    within: 'conversation',
  });
}
