/**
 * The server side of the `/schedules` buttons, as `io/commands/session-buttons.ts` is for `/sessions`:
 * callback data is only a random token (`sc:<token>`); the action, the schedule and the conversation whose
 * list carried it are kept here, so forged data does nothing and a token works only in the conversation it
 * was shown in.
 *
 * Tokens live in memory (`io/telegram/button-tokens.ts`): each leaves after {@link SCHEDULE_BUTTON_TTL_MS},
 * or when more than {@link MAX_SCHEDULE_BUTTONS} are kept (the oldest first), or with the process.
 */
import type { Route } from '@switchyard/protocol';
import { createButtonTokens } from '../telegram/button-tokens.js';
import type { ScheduleButtonAction } from './schedule-texts.js';

/** Callback data of `/schedules` buttons starts with this; the rest is the token. */
export const SCHEDULE_BUTTON_PREFIX = 'sc:';
/** How long a `/schedules` list's buttons keep working. */
export const SCHEDULE_BUTTON_TTL_MS = 60 * 60_000;
/** Tokens kept at most. */
export const MAX_SCHEDULE_BUTTONS = 400;
/** Said to a press on a token that is gone, or never was one. */
export const SCHEDULE_BUTTON_EXPIRED = 'This button has expired: send /schedules again.';

/** The tokens behind the `/schedules` buttons. */
export interface ScheduleButtons {
  /** A new token for `action` on schedule `id`, pressable in `shownIn`; returns its callback data. */
  issue(action: ScheduleButtonAction, id: string, shownIn: Route): string;
  /** The press's action and schedule, or undefined when the token is unknown, expired or from elsewhere. */
  resolve(data: string, from: Route): { action: ScheduleButtonAction; id: string } | undefined;
}

/**
 * Creates the token table (`io/telegram/button-tokens.ts`, one conversation's); `now` reads the gateway's
 * clock.
 */
export function createScheduleButtons(now: () => number): ScheduleButtons {
  const tokens = createButtonTokens<{ action: ScheduleButtonAction; id: string }>(
    SCHEDULE_BUTTON_PREFIX,
    now,
    { ttlMs: SCHEDULE_BUTTON_TTL_MS, max: MAX_SCHEDULE_BUTTONS, within: 'conversation' },
  );
  return {
    issue: (action, id, shownIn) => tokens.issue({ action, id }, shownIn, shownIn),
    resolve: (data, from) => tokens.resolve(data, from)?.action,
  };
}
