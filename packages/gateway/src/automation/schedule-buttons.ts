/**
 * The server side of the `/schedules` buttons, as `session-buttons.ts` is for `/sessions`: callback data
 * is only a random token (`sc:<token>`); the action, the schedule and the conversation whose list carried
 * it are kept here, so forged data does nothing and a token works only in the conversation it was shown in.
 *
 * Tokens live in memory: each leaves after {@link SCHEDULE_BUTTON_TTL_MS}, or when more than
 * {@link MAX_SCHEDULE_BUTTONS} are kept (the oldest first), or with the process.
 */
import { randomBytes } from 'node:crypto';
import { conversationKey, type Route } from '@switchyard/protocol';
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

/** Creates the token table; `now` reads the gateway's clock. */
export function createScheduleButtons(now: () => number): ScheduleButtons {
  const tokens = new Map<string, { action: ScheduleButtonAction; id: string; shownIn: string; at: number }>();
  const sweep = (at: number): void => {
    for (const [token, entry] of tokens) {
      if (at - entry.at <= SCHEDULE_BUTTON_TTL_MS && tokens.size <= MAX_SCHEDULE_BUTTONS) break;
      tokens.delete(token);
    }
  };
  return {
    issue(action, id, shownIn) {
      const at = now();
      const token = randomBytes(12).toString('base64url');
      tokens.set(token, { action, id, shownIn: conversationKey(shownIn), at });
      sweep(at);
      return `${SCHEDULE_BUTTON_PREFIX}${token}`;
    },
    resolve(data, from) {
      sweep(now());
      if (!data.startsWith(SCHEDULE_BUTTON_PREFIX)) return undefined;
      const entry = tokens.get(data.slice(SCHEDULE_BUTTON_PREFIX.length));
      if (!entry || entry.shownIn !== conversationKey(from)) return undefined;
      return { action: entry.action, id: entry.id };
    },
  };
}
