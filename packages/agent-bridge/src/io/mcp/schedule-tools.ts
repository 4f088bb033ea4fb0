/**
 * The agent's schedule tools on Switchyard's MCP server: `schedule_add`, `schedule_list` and
 * `schedule_remove`, for the conversation the agent serves. The gateway keeps the schedules: a call
 * becomes a `schedule_request` frame (reliable, under a request id of its own) and the tool answers with
 * the gateway's `schedule_result` — or, if none comes within {@link SCHEDULE_ANSWER_MS}, says so.
 *
 * The descriptions are written for the model: the two timing forms, the time zone, and that a run reaches
 * the conversation as a message from the schedule.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, FrameOf, Route } from '@switchyard/protocol';
import { z } from 'zod';
import type { ToolAnswer } from './tool-answer.js';

/** The tools: name, title, description for the model, and the arguments' schema. */
export const SCHEDULE_TOOLS = [
  {
    name: 'schedule_add',
    title: 'Schedule a prompt in this chat',
    description:
      'Makes a schedule in the Telegram conversation you are talking in: at each due time the prompt reaches you here as a message from the schedule (naming it and the due time), and your answer goes to this chat. Give either cron (repeating: five fields "minute hour day-of-month month day-of-week", e.g. "0 9 * * 1-5" for weekdays at 9:00; at most once a minute) or at (once: an ISO 8601 time with an offset, e.g. 2026-12-01T09:00:00+01:00). Times are in timezone (an IANA name such as Europe/Berlin; default the agent\'s time zone). Returns the schedule\'s id and next due time, or what to fix.',
    input: z.object({
      prompt: z.string().min(1).max(4000).describe('What to do at each due time, as you would be asked.'),
      cron: z.string().min(1).max(200).optional().describe('A repeating cron pattern; or give at.'),
      at: z.string().min(1).max(100).optional().describe('A one-off time, ISO 8601; or give cron.'),
      name: z.string().min(1).max(60).optional().describe('A short name people see in the chat.'),
      timezone: z.string().min(1).max(100).optional().describe('IANA time zone of cron and at.'),
    }),
  },
  {
    name: 'schedule_list',
    title: "List this chat's schedules",
    description:
      'Lists the schedules of the conversation you are talking in (those made here and those of the config file): id, name, timing, next due time, paused or not.',
    input: z.object({}),
  },
  {
    name: 'schedule_remove',
    title: 'Remove a schedule of this chat',
    description:
      'Removes a schedule made in this conversation, by its id (from schedule_list) or name. Schedules of the config file cannot be removed here.',
    input: z.object({ which: z.string().min(1).max(200).describe('The schedule id or name.') }),
  },
] as const;

/** A schedule tool's name. */
export type ScheduleTool = (typeof SCHEDULE_TOOLS)[number]['name'];

/** The tools' full names, as `--allowedTools` takes them. */
export const SCHEDULE_TOOL_NAMES = SCHEDULE_TOOLS.map((tool) => `mcp__switchyard__${tool.name}`);

/** A schedule tool call, as the gateway's request takes it (without the id and route). */
export type ScheduleCall = Omit<FrameOf<'schedule_request'>, 'type' | 'seq' | 'requestId' | 'route'>;

/** How long a call waits for the gateway's answer. */
export const SCHEDULE_ANSWER_MS = 15_000;

/** The call for a `tools/call` of a schedule tool, or what was wrong; undefined for another tool. */
export function scheduleToolCall(
  name: unknown,
  args: unknown,
): { ok: true; call: ScheduleCall } | { ok: false; text: string } | undefined {
  const tool = SCHEDULE_TOOLS.find((t) => t.name === name);
  if (!tool) return undefined;
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return { ok: false, text: `invalid arguments: ${z.prettifyError(parsed.error)}` };
  const data = parsed.data as Record<string, string | undefined>;
  const action = tool.name === 'schedule_add' ? 'add' : tool.name === 'schedule_list' ? 'list' : 'remove';
  const call: ScheduleCall = { action };
  for (const key of ['prompt', 'cron', 'at', 'name', 'timezone', 'which'] as const) {
    const value = data[key];
    if (value !== undefined) call[key] = value;
  }
  return { ok: true, call };
}

/** Asks the gateway and waits for its answer: the bridge's one pending table for schedule calls. */
export interface ScheduleAsker {
  ask(route: Route, call: ScheduleCall): Promise<ToolAnswer>;
  /** The gateway's answer; one for no pending call (a restart forgot it) is dropped. */
  answer(frame: FrameOf<'schedule_result'>): void;
}

/** Creates the asker over the bridge's channel. */
export function createScheduleAsker(options: {
  send(frame: FrameOf<'schedule_request'>): Promise<void>;
  clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
  answerMs?: number;
}): ScheduleAsker {
  const pending = new Map<string, (answer: ToolAnswer) => void>();
  return {
    ask(route, call) {
      const requestId = `sch-${randomUUID()}`;
      return new Promise<ToolAnswer>((resolve) => {
        const timer = options.clock.setTimeout(() => {
          pending.delete(requestId);
          resolve({
            ok: false,
            text: 'Switchyard did not answer in time (it may be restarting); the request stays queued and may still be carried out: check with schedule_list.',
          });
        }, options.answerMs ?? SCHEDULE_ANSWER_MS);
        pending.set(requestId, (answer) => {
          options.clock.clearTimeout(timer);
          pending.delete(requestId);
          resolve(answer);
        });
        options.send({ type: 'schedule_request', requestId, route, ...call }).catch((error: unknown) => {
          pending.get(requestId)?.({ ok: false, text: `the request could not be sent: ${String(error)}` });
        });
      });
    },
    answer(frame) {
      pending.get(frame.requestId)?.({ ok: frame.ok, text: frame.text });
    },
  };
}
