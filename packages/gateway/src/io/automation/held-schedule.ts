/**
 * What the schedules' shell (`schedules.ts`) holds of each schedule: its facts as the texts name them,
 * its conversation, since when it counts, its due times, and who its runs are charged to. Made fresh
 * from the config's list and the store's chat rows at each look, so the store stays the one truth.
 */
import type { Route } from '@switchyard/protocol';
import type { ChatScheduleRow } from '../../store/schedule-table.js';
import { cronDue, dueUntil, type NextDue, onceDue } from './cron.js';
import type { ConfiguredSchedule } from './schedule-options.js';
import type { ScheduleFacts } from './schedule-texts.js';

/** One schedule as the shell holds it. */
export interface Held {
  facts: Omit<ScheduleFacts, 'paused' | 'next' | 'orphaned'>;
  route: Route;
  since: number;
  nextAfter: NextDue;
  /** Who its runs are charged to: a chat schedule's creator. */
  owner: number | undefined;
}

/** The config file's schedules: the operator's, never waiting, charged to nobody. */
export function configuredSchedules(list: readonly ConfiguredSchedule[], zone: string): Held[] {
  return list.map((c) => ({
    facts: {
      id: c.name,
      name: c.name,
      cron: c.cron,
      at: undefined,
      timezone: c.timezone ?? zone,
      prompt: c.prompt,
      source: 'config',
      waiting: false,
      expiresAt: undefined,
    },
    route: { chatId: c.chatId, ...(c.threadId !== undefined ? { threadId: c.threadId } : {}) },
    since: Number.NEGATIVE_INFINITY,
    nextAfter: cronDue(c.cron, c.timezone ?? zone),
    owner: undefined,
  }));
}

/** A schedule made from a chat: waiting until kept, ending at its `until`, charged to its creator. */
export function chatSchedule(row: ChatScheduleRow, zone: string): Held {
  return {
    facts: {
      id: row.id,
      name: row.name,
      cron: row.cron,
      at: row.at,
      timezone: row.timezone ?? zone,
      prompt: row.prompt,
      source: 'chat',
      waiting: row.keptBy === undefined,
      expiresAt: row.expiresAt,
    },
    route: row.route,
    since: row.createdAt,
    nextAfter: dueUntil(
      row.cron !== undefined ? cronDue(row.cron, row.timezone ?? zone) : onceDue(row.at ?? 0),
      row.expiresAt,
    ),
    owner: row.createdBy,
  };
}
