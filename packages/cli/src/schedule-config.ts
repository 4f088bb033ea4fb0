/**
 * An agent's schedules in the config file: the agent's `timezone` (UTC when absent), its `schedules:`
 * and `scheduleGraceMinutes`, how old the most recent run missed while Switchyard was down may be and
 * still run once on start (default 60).
 *
 * ```yaml
 * timezone: Europe/Berlin
 * scheduleGraceMinutes: 60
 * schedules:
 *   - name: ci-digest
 *     cron: "0 9 * * 1-5"          # five fields, or six with seconds first
 *     chat: -1001234567890
 *     topic: 42                     # optional
 *     prompt: "Summarize yesterday's CI failures and what changed since."
 *     timezone: America/New_York    # optional, per schedule
 * ```
 *
 * Patterns and zones are checked with the gateway's own croner (`cronProblem`), so a file that passes
 * here runs there; each error names the key and what to write instead.
 */
import type { ConfiguredSchedule, ScheduleOptions } from '@switchyard/gateway';
// The cron rules alone, not the gateway's index: every command reads the config, and the whole gateway
// (grammY, SQLite, …) cost the bridge and each operator command ~0.35 s of CPU at start for two checks.
import { cronProblem, timezoneProblem } from '@switchyard/gateway/cron';
import { z } from 'zod';

const zone = z.string().superRefine((value, ctx) => {
  const problem = timezoneProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const schedule = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,59}$/, {
      error:
        'expected a short name of letters, digits, _ . - (it names the schedule in the chat and in run keys)',
    }),
    cron: z.string().min(1, { error: 'expected a cron pattern like "0 9 * * 1-5"' }),
    chat: z.number({ error: 'expected a Telegram chat id (integer)' }).int(),
    topic: z.number().int().positive().optional(),
    prompt: z.string().min(1, { error: 'expected the prompt to run' }).max(4000),
    timezone: zone.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.name.startsWith('chat-'))
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message: 'names starting with chat- are the chats’ own',
      });
    const problem = cronProblem(s.cron, s.timezone);
    if (problem) ctx.addIssue({ code: 'custom', path: ['cron'], message: problem });
  });

/** The agent keys of this module, spread into the agent's schema. */
export const scheduleKeys = {
  /** The agent's default time zone (IANA); UTC when absent. */
  timezone: zone.optional(),
  schedules: z
    .array(schedule)
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((s, i) => {
        if (seen.has(s.name))
          ctx.addIssue({
            code: 'custom',
            path: [i, 'name'],
            message: `"${s.name}" names two schedules: keep names unique`,
          });
        seen.add(s.name);
      });
    })
    .optional(),
  scheduleGraceMinutes: z.number().positive().optional(),
};

/** The keys as validated. */
export interface RawScheduleKeys {
  timezone?: string | undefined;
  schedules?: z.infer<typeof schedule>[] | undefined;
  scheduleGraceMinutes?: number | undefined;
}

/** The gateway's schedule options for an agent's validated keys. */
export function resolveSchedules(raw: RawScheduleKeys): ScheduleOptions {
  const list: ConfiguredSchedule[] = (raw.schedules ?? []).map((s) => ({
    name: s.name,
    cron: s.cron,
    chatId: s.chat,
    ...(s.topic !== undefined ? { threadId: s.topic } : {}),
    prompt: s.prompt,
    ...(s.timezone !== undefined ? { timezone: s.timezone } : {}),
  }));
  return {
    ...(raw.timezone !== undefined ? { timezone: raw.timezone } : {}),
    list,
    ...(raw.scheduleGraceMinutes !== undefined
      ? { graceMs: Math.round(raw.scheduleGraceMinutes * 60_000) }
      : {}),
  };
}
