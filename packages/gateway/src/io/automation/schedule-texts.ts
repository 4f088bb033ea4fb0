/**
 * What schedules say, pure: the text a run reaches Claude with, the note the chat shows for it, the
 * chat's notes about missed and waiting runs, and the `/schedules` list with its buttons.
 */

import type { ScheduleAction } from '../../core/automation/schedule.js';
import type { InlineButton } from '../../core/commands/command-texts.js';
import { dueIso } from './cron.js';

/** A schedule as the texts name it. */
export interface ScheduleFacts {
  id: string;
  name: string;
  /** The cron pattern, or undefined for a one-off. */
  cron: string | undefined;
  /** A one-off's time (Unix ms). */
  at: number | undefined;
  timezone: string;
  prompt: string;
  paused: boolean;
  /** Made in the chat (deletable there), or from the config file. */
  source: 'chat' | 'config';
  /** The next due time, or undefined when none is left. */
  next: number | undefined;
  /** Made by the agent and not kept by a person yet: it does not run. */
  waiting: boolean;
  /** No due time after this runs. */
  expiresAt: number | undefined;
  /** Its creator left the allowlist: it does not run. */
  orphaned: boolean;
}

/** A `/schedules` button's action. */
export type ScheduleButtonAction = 'pause' | 'resume' | 'delete' | 'keep';

/** The tool's answer to a schedule added (`facts` undefined: it is gone again), by whether it waits. */
export function addedText(facts: ScheduleFacts | undefined, id: string): string {
  if (facts !== undefined && !facts.waiting) return `Added and kept: ${scheduleLine(facts)}`;
  return [
    `Added, waiting: ${facts ? scheduleLine(facts) : id}`,
    'It runs only after someone in this chat presses Keep on the message just posted for it; nothing runs before that.',
  ].join('\n');
}

/**
 * The message posted when the agent adds a schedule: what it is, and that it runs only once someone
 * here presses Keep (the buttons are {@link keepButtons}).
 */
export function keepText(s: ScheduleFacts): string {
  return [
    `🗓 The agent asked for a schedule here. It runs only after someone allowed presses Keep:`,
    scheduleLine(s),
  ].join('\n');
}

/** The Keep / Delete row of a waiting schedule. */
export function keepButtons(
  s: Pick<ScheduleFacts, 'id' | 'name'>,
  issue: (action: ScheduleButtonAction, id: string) => string,
): InlineButton[] {
  return [
    { text: `✅ Keep ${cut(s.name, 24)}`, callback_data: issue('keep', s.id) },
    { text: `🗑 Delete ${cut(s.name, 24)}`, callback_data: issue('delete', s.id) },
  ];
}

/** The text a run reaches Claude with: which schedule, the due time, that no person typed it, the prompt. */
export function runText(s: Pick<ScheduleFacts, 'name' | 'prompt'>, due: number, merged: number): string {
  const more =
    merged > 0
      ? ` It also stands for ${merged} later due time(s) that passed while the previous run was still going.`
      : '';
  return `Scheduled run of "${s.name}", due ${dueIso(due)} (sent by the schedule, not typed by a person).${more}\n\n${s.prompt}`;
}

/** The note the chat shows for a run (the message its answer replies to). */
export function runNote(s: Pick<ScheduleFacts, 'name'>, due: number, merged: number): string {
  return `⏰ ${s.name} · due ${dueIso(due)}${merged > 0 ? ` · stands for ${merged} more` : ''}`;
}

/**
 * What the chat is told of a `missed` or `waiting` action; undefined for a run (it has its note). `limited`:
 * the conversation waits out its usage limit, which is what the run waits for.
 */
export function actionNote(
  s: Pick<ScheduleFacts, 'name'>,
  action: ScheduleAction,
  limited = false,
): string | undefined {
  switch (action.kind) {
    case 'run':
      return undefined;
    case 'missed': {
      const count = `${action.more ? 'at least ' : ''}${action.count} run(s)`;
      const span =
        action.count === 1
          ? `due ${dueIso(action.first)}`
          : `due ${dueIso(action.first)} to ${dueIso(action.last)}`;
      return `⏰ ${s.name}: ${count} missed while Switchyard was down (${span}) were skipped.`;
    }
    case 'waiting':
      if (limited)
        return `⏰ ${s.name}: the usage limit is reached; the run due ${dueIso(action.held)} runs once it resets, and later due times are merged into it.`;
      return `⏰ ${s.name}: the previous run is still going; the run due ${dueIso(action.held)} waits for it, and later due times are merged into it.`;
  }
}

/** How a schedule's timing reads: its pattern and zone, or a one-off's time. */
export function timingText(s: Pick<ScheduleFacts, 'cron' | 'at' | 'timezone'>): string {
  return s.cron !== undefined ? `cron "${s.cron}" (${s.timezone})` : `once at ${dueIso(s.at ?? 0)}`;
}

/** One schedule as `schedule_list` and `/schedules` describe it. */
export function scheduleLine(s: ScheduleFacts): string {
  const state = s.waiting
    ? 'waiting for someone to press Keep'
    : s.orphaned
      ? 'paused: its creator is no longer allowed'
      : s.paused
        ? 'paused'
        : s.next === undefined
          ? 'done'
          : `next ${dueIso(s.next)}`;
  const from = s.source === 'config' ? ' · from the config file' : '';
  const until = s.expiresAt !== undefined ? ` · until ${dueIso(s.expiresAt)}` : '';
  return `${s.name} [${s.id}] · ${timingText(s)}${until} · ${state}${from}\n  ${cut(s.prompt, 120)}`;
}

/**
 * The `/schedules` list of a conversation with a row of buttons per schedule: pause or resume, and
 * delete for those made in the chat (a config schedule is the operator's to remove).
 */
export function schedulesView(
  schedules: readonly ScheduleFacts[],
  issue: (action: ScheduleButtonAction, id: string) => string,
): { text: string; buttons: InlineButton[][] } {
  if (schedules.length === 0)
    return {
      text: 'No schedules in this conversation. Ask the agent ("every weekday at nine, check the build") or add them to the config file.',
      buttons: [],
    };
  const text = [`Schedules here (${schedules.length}):`, ...schedules.map(scheduleLine)].join('\n');
  const buttons = schedules.map((s) =>
    s.waiting
      ? keepButtons(s, issue)
      : [
          s.paused
            ? { text: `▶ Resume ${cut(s.name, 24)}`, callback_data: issue('resume', s.id) }
            : { text: `⏸ Pause ${cut(s.name, 24)}`, callback_data: issue('pause', s.id) },
          ...(s.source === 'chat'
            ? [{ text: `🗑 Delete ${cut(s.name, 24)}`, callback_data: issue('delete', s.id) }]
            : []),
        ],
  );
  return { text, buttons };
}

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}
