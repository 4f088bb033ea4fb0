/**
 * The schedules' shell: the config's schedules and those made from chats, decided by the pure core
 * (`core/automation/schedule.ts`) at each wake-up of ONE timer on the gateway's clock; runs delivered through
 * the injector (`inject.ts`), chat notes for missed and waiting runs, and the chat's own
 * operations (`schedule_add`/`list`/`remove` from the agent's MCP tools, `/schedules` with its buttons).
 *
 * Exactly once: a decision's new states and its runs' injections are ONE transaction — a due time is
 * recorded as decided in the transaction that puts its run in the inbox under the key
 * `schedule:<id>:<dueIso>`, so a crash before it leaves the due time undecided (it runs after the
 * restart, within the grace) and a crash after it leaves the run queued (the boot re-sends it).
 *
 * A schedule is busy while its latest run has not reached the CLI, or has and its conversation's turn is
 * still going (a user's turn in that conversation counts: a run waits for it too).
 *
 * Schedules a person agreed to (issue 27): one the agent adds (`schedule_add`) is posted in its
 * conversation with Keep / Delete buttons and never runs until an allowed user presses Keep; nothing
 * due before that press runs. Its creator (the person whose turn asked, else the one who kept it) is
 * charged for its runs (the run's sender), and while the creator is not on the allowlist it is paused.
 * At most {@link CHAT_SCHEDULE_LIMIT} per conversation and {@link AGENT_SCHEDULE_LIMIT} for the agent;
 * an optional `until` ends it. The config file's schedules are the operator's and run as written.
 */
import {
  automationLane,
  type Clock,
  createWakeTimer,
  type FrameOf,
  type Logger,
  type Route,
  readsUntrustedInput,
} from '@switchyard/protocol';
import { decideSchedules, type ScheduleState, type ScheduleView } from '../../core/automation/schedule.js';
import type { InlineButton } from '../../core/commands/command-texts.js';
import { chatRoute } from '../../core/intake/route.js';
import type { GatewayStore } from '../../store/store.js';
import { dueIso } from './cron.js';
import { chatSchedule, configuredSchedules, type Held } from './held-schedule.js';
import { type Injector, runInboundId } from './inject.js';
import { createScheduleButtons, SCHEDULE_BUTTON_EXPIRED } from './schedule-buttons.js';

export { SCHEDULE_BUTTON_PREFIX } from './schedule-buttons.js';

import type { ScheduleOptions } from './schedule-options.js';
import {
  checkScheduleRequest,
  creatorOf,
  readsWebhook,
  type ScheduleRequest,
  WEBHOOK_TURN_REFUSAL,
} from './schedule-request.js';
import {
  actionNote,
  addedText,
  keepButtons,
  keepText,
  runNote,
  runText,
  type ScheduleButtonAction,
  type ScheduleFacts,
  scheduleLine,
  schedulesView,
} from './schedule-texts.js';

/** The answer to a chat's schedule operation (to the model, as a tool's result). */
export interface ScheduleAnswer {
  ok: boolean;
  text: string;
}

/** Chat-made schedules one conversation may have. */
export const CHAT_SCHEDULE_LIMIT = 20;
/** Chat-made schedules the agent may have in all its conversations, kept or waiting. */
export const AGENT_SCHEDULE_LIMIT = 50;
/** How long after a failed decision (a full disk) the schedules are looked at again. */
const RETRY_MS = 30_000;

/** What the schedules need. */
export interface SchedulesOptions {
  options?: ScheduleOptions | undefined;
  store: Pick<
    GatewayStore,
    | 'atomically'
    | 'getInbound'
    | 'scheduleStates'
    | 'saveScheduleState'
    | 'setScheduleRun'
    | 'setSchedulePaused'
    | 'addChatSchedule'
    | 'chatSchedules'
    | 'deleteChatSchedule'
    | 'keepChatSchedule'
  >;
  injector: Injector;
  /** The turn running in a conversation, if any (`Turns.running`). */
  running(route: Route): string | undefined;
  /**
   * Whether a conversation waits out its usage limit: its schedules are busy meanwhile, so the due times
   * of the wait become one run after the reset (held, the later ones merged into it), not one each.
   */
  limited?(route: Route): boolean;
  /** The inbound ids the running turn of a conversation has read (`Turns.readIn`). */
  readIn(route: Route): readonly string[];
  reply(route: Route, text: string): void;
  /** Sends the answer to an agent's request to the bridge. */
  answer(frame: FrameOf<'schedule_result'>): void;
  replyWithButtons(route: Route, text: string, buttons: InlineButton[][]): void;
  /** Whether a user is on the agent's allowlist now: a schedule's creator who is not has it paused. */
  allowedUser(userId: number): boolean;
  clock: Clock;
  logger: Logger;
}

/** The schedules' handle. */
export interface Schedules {
  /** Decides what is due now (runs missed while down, within the grace) and arms the timer. */
  start(): void;
  stop(): void;
  add(route: Route, request: ScheduleRequest, from?: number): ScheduleAnswer;
  list(route: Route): ScheduleAnswer;
  /** Removes a chat-made schedule of `route` by id or name. */
  remove(route: Route, which: string): ScheduleAnswer;
  /** An agent's schedule request (its schedule_* tools): carried out, answered to the bridge. */
  request(frame: FrameOf<'schedule_request'>): void;
  /** `/schedules`: the conversation's schedules with their buttons. */
  show(route: Route): void;
  /** A press by user `by` on a schedule button in `from`; returns the text to answer the press with. */
  press(data: string, from: Route, by?: number): string;
}

const sameRoute = (a: Route, b: Route): boolean => a.chatId === b.chatId && a.threadId === b.threadId;

/** Creates the schedules' shell; nothing runs until `start`. */
export function createSchedules(options: SchedulesOptions): Schedules {
  const { store, clock, logger } = options;
  const zone = options.options?.timezone ?? 'UTC';
  const buttons = createScheduleButtons(() => clock.now());
  let started = false;
  let startedAt = 0;

  const configured = configuredSchedules(options.options?.list ?? [], zone);
  /** Every schedule now: the config's, then the chats' (read from the store each time: it is the truth). */
  const all = (): Held[] => [...configured, ...store.chatSchedules().map((row) => chatSchedule(row, zone))];
  /** A chat schedule whose creator left the allowlist: paused while they are off it. */
  const orphaned = (s: Held): boolean =>
    s.facts.source === 'chat' && (s.owner === undefined || !options.allowedUser(s.owner));

  const busy = (lastInbound: string | undefined): boolean => {
    const row = lastInbound === undefined ? undefined : store.getInbound(lastInbound);
    if (!row || row.state === 'unread') return false;
    return row.state !== 'taken' || options.running(row.route) !== undefined;
  };

  const evaluate = (): void => {
    if (!started) return;
    const now = clock.now();
    // A waiting schedule is not a schedule yet: nothing of it is decided until a person keeps it.
    const schedules = all().filter((s) => !s.facts.waiting);
    const recorded = store.scheduleStates();
    const byId = new Map(schedules.map((s) => [s.facts.id, s]));
    // A config schedule seen first starts from the gateway's start; a chat one from when it was made.
    const views: ScheduleView[] = schedules.map((s) => ({
      id: s.facts.id,
      paused: (recorded.get(s.facts.id)?.paused ?? false) || orphaned(s),
      since: Number.isFinite(s.since) ? s.since : startedAt,
      nextAfter: s.nextAfter,
    }));
    const step = decideSchedules({
      schedules: views,
      states: recorded as ReadonlyMap<string, ScheduleState>,
      busy: (id) => {
        const route = byId.get(id)?.route;
        return (
          busy(recorded.get(id)?.lastInbound) || (route !== undefined && options.limited?.(route) === true)
        );
      },
      now,
      ...(options.options?.graceMs !== undefined ? { graceMs: options.options.graceMs } : {}),
    });
    const notes: { route: Route; text: string }[] = [];
    try {
      store.atomically(() => {
        for (const [id, state] of step.states) store.saveScheduleState(id, state);
        for (const action of step.actions) {
          const s = byId.get(action.id);
          if (!s) continue;
          if (action.kind !== 'run') {
            const text = actionNote(s.facts, action, options.limited?.(s.route) === true);
            if (text) notes.push({ route: s.route, text });
            continue;
          }
          const key = `schedule:${action.id}:${dueIso(action.due)}`;
          const outcome = options.injector.inject({
            key,
            route: s.route,
            origin: { kind: 'schedule', name: s.facts.name },
            lane: automationLane('schedule', s.facts.id),
            ...(s.owner !== undefined ? { chargeTo: s.owner } : {}),
            note: runNote(s.facts, action.due, action.merged),
            text: runText(s.facts, action.due, action.merged),
          });
          store.setScheduleRun(action.id, runInboundId(key));
          logger.info({ event: 'schedule_run', schedule: action.id, due: dueIso(action.due), outcome });
        }
      });
    } catch (error) {
      logger.error({ event: 'schedule_failed', error: String(error) }, 'schedules not decided; retrying');
      arm(now + RETRY_MS);
      return;
    }
    for (const note of notes) options.reply(note.route, note.text);
    arm(step.wakeAt);
  };
  // The one timer (the protocol's wake timer, as the turns and the card keep theirs): a wake-up earlier
  // than the next due time only looks again and finds nothing due.
  const wake = createWakeTimer(clock, () => evaluate());
  const arm = (at: number | undefined): void => {
    if (started) wake.arm(at);
  };

  /** The facts of every schedule of `route`, with its pause and next due time. */
  const factsOf = (route: Route): ScheduleFacts[] => {
    const recorded = store.scheduleStates();
    const now = clock.now();
    return all()
      .filter((s) => sameRoute(s.route, route))
      .map((s) => {
        const state = recorded.get(s.facts.id);
        return {
          ...s.facts,
          paused: state?.paused ?? false,
          orphaned: !s.facts.waiting && orphaned(s),
          next: s.nextAfter(Math.max(state?.decidedUpTo ?? now, now)),
        };
      });
  };
  const added = (route: Route, id: string): ScheduleAnswer => ({
    ok: true,
    text: addedText(find(route, id), id),
  });
  const find = (route: Route, which: string): ScheduleFacts | undefined => {
    const here = factsOf(route);
    return here.find((s) => s.id === which) ?? here.find((s) => s.name === which);
  };

  const handle: Schedules = {
    start() {
      started = true;
      startedAt = clock.now();
      evaluate();
    },
    stop() {
      started = false;
      wake.stop();
    },

    add(route, request, from) {
      // The channel's resend of a request already carried out: the same answer, not a second schedule.
      const made = store.chatSchedules().find((s) => request.requestId && s.requestId === request.requestId);
      if (made) return added(route, made.id);
      const checked = checkScheduleRequest(request, clock.now(), zone);
      if (!checked.ok) return checked;
      const chats = store.chatSchedules();
      if (chats.filter((s) => sameRoute(s.route, route)).length >= CHAT_SCHEDULE_LIMIT)
        return {
          ok: false,
          text: `this conversation has ${CHAT_SCHEDULE_LIMIT} schedules already: remove one first`,
        };
      if (chats.length >= AGENT_SCHEDULE_LIMIT)
        return {
          ok: false,
          text: `this agent has ${AGENT_SCHEDULE_LIMIT} schedules made from chats already: remove one first`,
        };
      const row = store.addChatSchedule({
        ...checked.schedule,
        route,
        createdBy: from,
        requestId: request.requestId,
      });
      const facts = find(route, row.id);
      if (facts) {
        const issue = (action: ScheduleButtonAction, id: string) => buttons.issue(action, id, route);
        options.replyWithButtons(route, keepText(facts), [keepButtons(facts, issue)]);
      }
      logger.info({ event: 'schedule_waiting', schedule: row.id, creator: from });
      return added(route, row.id);
    },

    list(route) {
      const here = factsOf(route);
      return {
        ok: true,
        text:
          here.length === 0
            ? 'No schedules in this conversation.'
            : [`${here.length} schedule(s) in this conversation:`, ...here.map(scheduleLine)].join('\n'),
      };
    },

    remove(route, which) {
      const found = find(route, which.trim());
      if (!found)
        return { ok: false, text: `no schedule "${which}" in this conversation (see schedule_list)` };
      if (found.source === 'config')
        return { ok: false, text: `"${found.name}" is in the config file: the operator removes it there` };
      store.deleteChatSchedule(found.id);
      arm(clock.now());
      return { ok: true, text: `Removed ${found.name} [${found.id}].` };
    },

    show(route) {
      const view = schedulesView(factsOf(route), (action, id) => buttons.issue(action, id, route));
      options.replyWithButtons(route, view.text, view.buttons);
    },

    press(data, from, by) {
      const parsed = buttons.resolve(data, from);
      const found = parsed && factsOf(from).find((s) => s.id === parsed.id);
      if (!parsed || !found) return SCHEDULE_BUTTON_EXPIRED;
      switch (parsed.action) {
        case 'keep': {
          if (!found.waiting) return 'It is kept already.';
          if (by === undefined || !options.allowedUser(by)) return 'Only someone allowed here can keep it.';
          // Kept now: it starts from this press, so nothing due while it waited runs.
          store.atomically(() => {
            store.keepChatSchedule(found.id, by);
            store.saveScheduleState(found.id, { decidedUpTo: clock.now(), held: undefined, merged: 0 });
          });
          logger.info({ event: 'schedule_kept', schedule: found.id, by });
          const kept = factsOf(from).find((s) => s.id === found.id);
          options.reply(from, `✅ ${found.name} is kept: ${kept ? scheduleLine(kept) : found.id}`);
          arm(clock.now());
          return 'Kept.';
        }
        case 'pause':
          store.setSchedulePaused(found.id, true, clock.now());
          options.reply(from, `⏸ ${found.name} is paused.`);
          break;
        case 'resume':
          store.setSchedulePaused(found.id, false, clock.now());
          options.reply(from, `▶ ${found.name} runs again (what was due while paused does not run).`);
          break;
        case 'delete':
          if (found.source === 'config') return 'A schedule of the config file is removed there.';
          store.deleteChatSchedule(found.id);
          options.reply(from, `🗑 ${found.name} is deleted.`);
          break;
      }
      arm(clock.now());
      return parsed.action === 'pause' ? 'Paused.' : parsed.action === 'resume' ? 'Resumed.' : 'Deleted.';
    },

    request(frame) {
      const read = options.readIn(frame.route);
      // The schedules belong to the chat (and topic), whichever of its conversations asks; a webhook's
      // session has read a stranger's text for the rest of its life, so it may list them only.
      const place = chatRoute(frame.route);
      const untrusted = readsWebhook(read) || readsUntrustedInput(frame.route);
      const answer =
        frame.action !== 'list' && untrusted
          ? { ok: false, text: WEBHOOK_TURN_REFUSAL }
          : frame.action === 'list'
            ? handle.list(place)
            : frame.action === 'remove'
              ? handle.remove(place, frame.which ?? '')
              : handle.add(
                  place,
                  {
                    name: frame.name,
                    cron: frame.cron,
                    at: frame.at,
                    prompt: frame.prompt ?? '',
                    timezone: frame.timezone,
                    until: frame.until,
                    requestId: frame.requestId,
                  },
                  creatorOf(read, (id) => store.getInbound(id)),
                );
      logger.info({ event: 'schedule_request', action: frame.action, ok: answer.ok });
      options.answer({
        type: 'schedule_result',
        requestId: frame.requestId,
        ok: answer.ok,
        text: answer.text,
      });
    },
  };
  return handle;
}
