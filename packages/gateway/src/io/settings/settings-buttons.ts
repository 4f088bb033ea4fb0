/**
 * The server side of the `/settings` buttons. A button's callback data is only a random token
 * (`st:<token>`); the choice it makes and the conversation it was shown in are kept here, so forged
 * callback data does nothing, and a token is honoured only from the conversation (chat and topic) whose
 * panel carried it.
 *
 * Tokens live in memory: each leaves after {@link SETTINGS_BUTTON_TTL_MS}, or when more than
 * {@link MAX_SETTINGS_BUTTONS} are kept (the oldest first), or with the process; a press on a token that
 * left is told the button expired.
 */
import type { Route } from '@switchyard/protocol';
import type { SettingsChoice } from '../../core/settings/settings.js';
import { createButtonTokens } from '../telegram/button-tokens.js';

/** Callback data of `/settings` buttons starts with this; the rest is the token. */
export const SETTINGS_BUTTON_PREFIX = 'st:';

/** How long a panel's buttons keep working. */
export const SETTINGS_BUTTON_TTL_MS = 60 * 60_000;

/** Tokens kept at most (about forty panels' worth). */
export const MAX_SETTINGS_BUTTONS = 400;

/** Said to a press on a button whose token is gone, or never was one. */
export const SETTINGS_BUTTON_EXPIRED = 'This button has expired: send /settings again.';

/** The tokens behind the `/settings` buttons. */
export interface SettingsButtons {
  /** A new token for `choice` in conversation `route`; returns its callback data. */
  issue(choice: SettingsChoice, route: Route): string;
  /** The press's choice, or `undefined` when the token is unknown, expired or from another conversation. */
  resolve(data: string, from: Route): SettingsChoice | undefined;
}

/**
 * Creates the token table (`io/telegram/button-tokens.ts`, one conversation's); `now` reads the gateway's
 * clock.
 */
export function createSettingsButtons(now: () => number): SettingsButtons {
  const tokens = createButtonTokens<SettingsChoice>(SETTINGS_BUTTON_PREFIX, now, {
    ttlMs: SETTINGS_BUTTON_TTL_MS,
    max: MAX_SETTINGS_BUTTONS,
    within: 'conversation',
  });
  return {
    issue: (choice, route) => tokens.issue({ ...choice }, route, route),
    resolve: (data, from) => {
      const found = tokens.resolve(data, from);
      return found && { ...found.action };
    },
  };
}
