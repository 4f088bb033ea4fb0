/**
 * The gateway's schedule options, as the cli maps an agent's `timezone`, `schedules:` and
 * `scheduleGraceMinutes` onto them. Imports nothing: `options.ts` takes it as it is.
 */

/** A schedule from the config file. */
export interface ConfiguredSchedule {
  /** Unique among the agent's schedules; its id (part of every run's key) and what the chat calls it. */
  name: string;
  /** Five fields, or six with seconds first (validated with `cronProblem`). */
  cron: string;
  chatId: number;
  threadId?: number;
  /** What reaches Claude at each due time, after a line naming the schedule and the due time. */
  prompt: string;
  /** IANA time zone; default the agent's {@link ScheduleOptions.timezone}. */
  timezone?: string;
}

/** How the agent's schedules run. */
export interface ScheduleOptions {
  /** The agent's default time zone (IANA); UTC when absent. */
  timezone?: string;
  /** The config's schedules. */
  list?: readonly ConfiguredSchedule[];
  /**
   * How old the most recent due time missed while Switchyard was down may be and still run once on
   * start; older ones are skipped and said so. Default one hour.
   */
  graceMs?: number;
}
