/**
 * What a chat may ask for when it makes a schedule (`schedule_add`), checked before anything is kept:
 * exactly one timing form, a valid pattern or a future time, a time zone that exists, a prompt within
 * its limit, and no repetition faster than once a minute (the config file's schedules may be faster).
 * Each refusal says what to fix, for the model to read as the tool's result.
 */
import { cronDue, cronProblem, dueIso, timezoneProblem } from './cron.js';
import { runInboundId } from './inject.js';

/** What `schedule_add` asks for. */
export interface ScheduleRequest {
  name?: string | undefined;
  /** Five fields, or six with seconds first; or `at`. */
  cron?: string | undefined;
  /** A one-off time, ISO 8601 (with an offset or `Z`). */
  at?: string | undefined;
  prompt: string;
  timezone?: string | undefined;
  /** The agent's request id: a request sent again adds nothing. */
  requestId?: string | undefined;
}

/** A request that passed: what to keep. */
export interface CheckedSchedule {
  name: string;
  prompt: string;
  cron: string | undefined;
  at: number | undefined;
  timezone: string | undefined;
}

/** The shortest interval a chat-made cron schedule may repeat at. */
export const CHAT_MIN_INTERVAL_MS = 60_000;
/** The longest prompt a schedule may carry. */
export const SCHEDULE_PROMPT_LIMIT = 4000;

/** Checks a request at `now`, patterns read in `zone` unless it names its own. */
export function checkScheduleRequest(
  request: ScheduleRequest,
  now: number,
  zone: string,
): { ok: true; schedule: CheckedSchedule } | { ok: false; text: string } {
  const refuse = (text: string) => ({ ok: false as const, text });
  const prompt = request.prompt.trim();
  if (prompt.length === 0 || prompt.length > SCHEDULE_PROMPT_LIMIT)
    return refuse(`prompt: give the text to run, at most ${SCHEDULE_PROMPT_LIMIT} characters`);
  if ((request.cron === undefined) === (request.at === undefined))
    return refuse('give exactly one of cron (a repeating pattern) and at (a one-off time)');
  const timezone = request.timezone;
  const zoneProblem = timezoneProblem(timezone);
  if (zoneProblem) return refuse(`timezone: ${zoneProblem}`);
  let at: number | undefined;
  if (request.cron !== undefined) {
    const problem = cronProblem(request.cron, timezone ?? zone);
    if (problem) return refuse(`cron: ${problem}`);
    const due = cronDue(request.cron, timezone ?? zone);
    const first = due(now);
    const second = first === undefined ? undefined : due(first);
    if (first === undefined) return refuse('cron: this pattern is never due');
    if (second !== undefined && second - first < CHAT_MIN_INTERVAL_MS)
      return refuse('cron: a schedule made from a chat repeats at most once a minute');
  } else {
    at = Date.parse(request.at ?? '');
    if (Number.isNaN(at))
      return refuse('at: expected an ISO 8601 time like 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00');
    if (at <= now) return refuse(`at: ${dueIso(at)} has passed (it is ${dueIso(now)} now)`);
  }
  const name = (request.name?.trim() || prompt.split(/\s+/).slice(0, 4).join(' ')).slice(0, 60);
  return { ok: true, schedule: { name, prompt, cron: request.cron, at, timezone } };
}

/**
 * Whether a turn has read a webhook's delivery. Its payload is a third party's text (an issue comment,
 * a commit message), so a schedule the model asks to make or remove in that turn may be that text's
 * doing rather than an allowed user's: such requests are refused.
 */
export function readsWebhook(inboundIds: readonly string[]): boolean {
  return inboundIds.some((id) => id.startsWith(runInboundId('webhook:')));
}

/** The tool's answer when {@link readsWebhook} refuses a request. */
export const WEBHOOK_TURN_REFUSAL =
  'Schedules cannot be made or removed in a turn that read a webhook delivery (its text comes from ' +
  'outside the chat). Ask a person in the chat to do it, or use /schedules.';
