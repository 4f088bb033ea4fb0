/**
 * The daily budgets' shell: it records what each turn cost and whose message opened it (from the
 * bridge's `turn_started` and `turn_ended`), sums today's spending in the agent's time zone, and asks
 * the rule (`core/spend/spend-gate.ts`) whether a new turn may start. `/status`, `switchyard status` and the
 * metrics read today's cost from here too.
 *
 * Where it gates: {@link SpendLedger.weigh} is asked before the turn machine takes a message — a
 * Telegram message's (`io/intake/telegram-handlers.ts`) and a run's (`io/automation/inject.ts`), whose
 * verdict goes in with it to `Turns.arrive` — and {@link SpendLedger.offer} weighs the boot's re-send of
 * the inbox (`io/ops/boot.ts`), so no new turn starts over a budget by any path. A refused message is
 * marked not read (by the turn machine's own arrival step, or here through `turns.refused` for one the
 * machine took before), so it leaves the inbox and is never re-sent; its sender is told the day's notice
 * once. A held one stays in the inbox and is kept here, and when a reservation leaves (a running turn
 * ended) the held ones are weighed again in the order they came: each admitted one is passed to the
 * bridge (`pass`), each refused one marked. `/compact` asks {@link SpendLedger.admitCommand}, a typed
 * answer and a voice note's transcription {@link SpendLedger.allows}; a transcription's cost is booked by
 * {@link SpendLedger.chargeTranscription}.
 *
 * Reservations (`core/spend/spend-reservations.ts`): every conversation with a message admitted or a turn
 * running holds one estimate of a turn's cost ({@link SpendLedger.estimateUsd}: `turnEstimateUsd`, else
 * the mean of the last turns' costs), so turns started at once cannot pass the budget by more than one
 * estimate. A turn that ended without a cost (its process died before a `result`) is charged the
 * estimate, never nothing. A run counts against the person its frame names as sender (a schedule's
 * creator, when the schedule records one), else against the agent's budget alone ({@link spenderOf}).
 *
 * Ownership: the rows are the store's (`store/spend-table.ts`); this module holds the reservations and
 * the held messages, in memory, and the options.
 */
import {
  assertNever,
  type Clock,
  conversationKey,
  type FrameOf,
  type Logger,
  type Route,
} from '@switchyard/protocol';
import type { SpendFrame } from '../../core/bridge/frame-owner.js';
import {
  budgetNotice,
  noticeKey,
  type SpendLimits,
  type SpendOptions,
  type SpendVerdict,
  spendVerdict,
} from '../../core/spend/spend-gate.js';
import { createReservations } from '../../core/spend/spend-reservations.js';
import type { GatewayStatus } from '../../options.js';
import type { ConversationSpend } from '../../store/spend-table.js';
import type { GatewayStore } from '../../store/store.js';
import { localDay, localTimeText } from './local-day.js';

/** The budgets and the day they count in (`GatewayOptions.spend`). */
export type { SpendOptions } from '../../core/spend/spend-gate.js';

/**
 * Spending (and the day's notices) is kept this long after it ended, then forgotten by the daily
 * retention pass (`retention.ts`), whatever the retention's own `days`: a budget counts today's rows,
 * and `switchyard status --cost` this month's. A local month began at most 31 days ago in any time zone
 * (and the pass runs daily), so 35 days hold every row either counts. A row is a few dozen bytes.
 */
export const SPEND_KEPT_MS = 35 * 24 * 3600_000;

/** What a turn is taken to cost before any has ended: a short one with a large model's context. */
export const DEFAULT_TURN_ESTIMATE_USD = 0.25;

/** The smallest estimate, whatever the recent turns cost: a free turn must not make reservations free. */
const MIN_TURN_ESTIMATE_USD = 0.01;

/** The recent turns whose mean cost is the estimate when `turnEstimateUsd` is not set. */
const ESTIMATE_TURNS = 20;

/** What a transcription costs a minute unless `transcriptionUsdPerMinute` says otherwise (OpenAI's). */
export const DEFAULT_TRANSCRIPTION_USD_PER_MINUTE = 0.006;

/**
 * Whether a message may start a turn: now, never today (`false`: why, short, and the notice when it is
 * due), or once a running turn has ended (`'hold'`).
 */
export type SpendCheck =
  | { admit: true }
  | { admit: false; scope: 'agent' | 'user'; reason: string; notice: string | undefined }
  | { admit: 'hold'; scope: 'agent' | 'user'; reason: string };

/** Today's cost, as `/status` and the metrics show it. */
export interface SpendToday {
  /** The local date, `YYYY-MM-DD`. */
  day: string;
  timeZone: string;
  agentUsd: number;
  conversations: ConversationSpend[];
  limits: SpendLimits;
}

/** The ledger's handle. */
export interface SpendLedger {
  /**
   * Sees the frames it reads (`SPEND_READS`, `core/bridge/frame-owner.ts`) on their way in, before their
   * owner: records turns' starts and costs; never throws (a cost not recorded is logged).
   */
  observe(frame: SpendFrame): void;
  /**
   * Whether `frame` may start a new turn now (see the module comment), asked before the turn machine
   * takes it (which marks a refused one unread itself): when it is admitted, its conversation holds a
   * reservation until the turn it opens or joins has ended; when refused, the day's notice is told if
   * due; when held, it is kept, weighed again as a running turn ends, and then passed or marked.
   */
  weigh(frame: FrameOf<'user_message'>): SpendCheck;
  /**
   * A message the machine did not take through `arrive` (the boot's re-send of one left queued):
   * weighed as {@link SpendLedger.weigh} does, then passed to the bridge, held, or marked unread.
   */
  offer(frame: FrameOf<'user_message'>): void;
  /**
   * Whether `userId` may spend in `route` now (a typed answer, a transcription); reserves nothing, and
   * leaves the day's notice for {@link SpendLedger.weigh} to give.
   */
  allows(route: Route, userId: number | undefined): SpendCheck;
  /** Whether `/compact` (`commandId`) may run; when it may, it is reserved and its cost booked. */
  admitCommand(commandId: string, route: Route, userId: number | undefined): SpendCheck;
  /** Books a voice note's transcription (`id` names it once) of `seconds` for `userId` in `route`. */
  chargeTranscription(id: string, route: Route, userId: number | undefined, seconds: number): void;
  /** What a turn is taken to cost until it has ended (see the module comment). */
  estimateUsd(): number;
  today(): SpendToday;
  /** `/status`'s cost today: the conversation's (with a route) and the agent's, and the agent's budget. */
  costToday(route?: Route): NonNullable<GatewayStatus['costToday']>;
}

/** What the ledger needs. */
export interface SpendLedgerOptions {
  store: Pick<
    GatewayStore,
    | 'getInbound'
    | 'getTurn'
    | 'spendStarted'
    | 'spendEnded'
    | 'spentSince'
    | 'spentByConversationSince'
    | 'noteBudgetNotice'
    | 'recentSpend'
    | 'unfinishedTurns'
  >;
  spend?: SpendOptions | undefined;
  /** Hands an admitted message to the bridge (`io/bridge/forward.ts`): a held one, or a boot's re-send. */
  pass(frame: FrameOf<'user_message'>): void;
  /** The turn machine, for a message it took before that a budget refused after (`Turns.refused`). */
  turns: { refused(inboundIds: readonly string[], reason: string): void };
  /** Tells a chat the day's notice, as a plain message. */
  tell(route: Route, text: string): void;
  /** A message a budget (the agent's, or its sender's) kept from starting a turn: the metrics count it. */
  onRefused(scope: 'agent' | 'user'): void;
  clock: Pick<Clock, 'now'>;
  logger: Logger;
}

/** The person a message counts against: its sender, or nobody for a run (whose stand-in sender is 0). */
export function spenderOf(frame: Pick<FrameOf<'user_message'>, 'sender'>): number | undefined {
  return frame.sender.id > 0 ? frame.sender.id : undefined;
}

/** Creates the ledger over the store. */
export function createSpendLedger(options: SpendLedgerOptions): SpendLedger {
  const { store, clock } = options;
  const logger = options.logger.child({ component: 'spend' });
  const timeZone = options.spend?.timeZone ?? 'UTC';
  const limits: SpendLimits = {
    dailyUsd: options.spend?.dailyUsd,
    perUserDailyUsd: options.spend?.perUserDailyUsd,
  };

  const reservations = createReservations();
  /** Held messages by inbound id, in the order they came (a resend of one keeps its place). */
  const held = new Map<string, FrameOf<'user_message'>>();
  const estimateUsd = (): number => {
    if (options.spend?.turnEstimateUsd !== undefined) return options.spend.turnEstimateUsd;
    const recent = store.recentSpend(ESTIMATE_TURNS);
    if (recent.length === 0) return DEFAULT_TURN_ESTIMATE_USD;
    return Math.max(MIN_TURN_ESTIMATE_USD, recent.reduce((a, b) => a + b, 0) / recent.length);
  };
  /** Books `usd` for work `workId` (a turn, a command) that ended, and lets go of its reservation. */
  const ended = (workId: string, usd: number | undefined): void => {
    // The route matters only for work whose start was never recorded; the turn table knows it.
    const route = store.getTurn(workId)?.route ?? { chatId: 0 };
    // No figure from the CLI (its process died before a `result`): the estimate, never nothing.
    store.spendEnded(workId, route, usd ?? estimateUsd(), clock.now());
    if (reservations.ended(workId)) released();
  };

  const observe = (frame: SpendFrame): void => {
    switch (frame.type) {
      case 'turn_started': {
        const opener = frame.inboundIds[0];
        const row = opener === undefined ? undefined : store.getInbound(opener);
        // An automation's inbound row (a schedule, a webhook) has no message in the chat to reply to.
        const message = row && row.telegramMessageId > 0 ? row.telegramMessageId : undefined;
        const userId = row ? spenderOf(row.frame) : undefined;
        store.spendStarted(frame.turnId, frame.route, userId, message);
        reservations.began(conversationKey(frame.route), frame.turnId, frame.inboundIds, userId, clock.now());
        return;
      }
      case 'turn_ended':
        ended(frame.turnId, frame.costUsd);
        return;
      case 'command_result':
        if (reservations.holds(commandWork(frame.commandId)))
          ended(commandWork(frame.commandId), frame.costUsd);
        return;
      case 'message_taken':
      case 'messages_unread':
        if (reservations.settled(frame.inboundIds, clock.now())) released();
        return;
      default:
        assertNever(frame);
    }
  };

  /** The rule's verdict for `userId` in `route`, the reservations of the other conversations counted. */
  const verdictFor = (route: Route, userId: number | undefined, now: number): SpendVerdict => {
    const day = localDay(now, timeZone);
    if (reservations.sweep(now)) released();
    const key = conversationKey(route);
    const estimate = estimateUsd();
    return spendVerdict(limits, {
      agentUsd: store.spentSince(day.start),
      userUsd: userId === undefined ? undefined : store.spentSince(day.start, userId),
      reservedUsd: reservations.others(key) * estimate,
      userReservedUsd: userId === undefined ? 0 : reservations.others(key, userId) * estimate,
    });
  };

  /**
   * The check's answer for a verdict: a hold logged, a refusal with the day's notice when it is due
   * (`tell`: the caller says it, so it counts as given; else the notice is left for `weigh` to give).
   */
  const answer = (
    verdict: SpendVerdict,
    route: Route,
    userId: number | undefined,
    now: number,
    tell = true,
  ): SpendCheck => {
    if (verdict.admit === true) return verdict;
    if (verdict.admit === 'hold') {
      logger.info({ event: 'budget_held', scope: verdict.scope, user: userId, chat: route.chatId });
      return { admit: 'hold', scope: verdict.scope, reason: verdict.reason };
    }
    const day = localDay(now, timeZone);
    const first =
      tell && store.noteBudgetNotice(noticeKey(day.day, verdict, { userId, chatId: route.chatId }), now);
    logger.info({ event: 'budget_refused', scope: verdict.scope, user: userId, chat: route.chatId });
    return {
      admit: false,
      scope: verdict.scope,
      reason: verdict.reason,
      notice: first ? budgetNotice(verdict, localTimeText(day.end, timeZone)) : undefined,
    };
  };
  const limited = limits.dailyUsd !== undefined || limits.perUserDailyUsd !== undefined;

  const weigh = (frame: FrameOf<'user_message'>): SpendCheck => {
    held.delete(frame.inboundId);
    if (!limited) return { admit: true };
    const now = clock.now();
    const userId = spenderOf(frame);
    const verdict = answer(verdictFor(frame.route, userId, now), frame.route, userId, now);
    if (verdict.admit === true)
      reservations.admitted(conversationKey(frame.route), frame.inboundId, userId, now);
    else if (verdict.admit === 'hold') held.set(frame.inboundId, frame);
    else {
      options.onRefused(verdict.scope);
      if (verdict.notice) options.tell(frame.route, verdict.notice);
    }
    return verdict;
  };
  const offer = (frame: FrameOf<'user_message'>): void => {
    const verdict = weigh(frame);
    if (verdict.admit === true) options.pass(frame);
    else if (verdict.admit === false) options.turns.refused([frame.inboundId], verdict.reason);
  };
  let reweighing = false;
  /** A reservation left: the held messages are weighed again, in the order they came. */
  function released(): void {
    // A weighing may itself let a stale reservation go: the loop already running weighs every held one.
    if (reweighing) return;
    reweighing = true;
    try {
      for (const frame of [...held.values()]) offer(frame);
    } finally {
      reweighing = false;
    }
  }

  // Turns a previous gateway saw start today and not end run on (the bridge keeps them): reserved again,
  // so a restart does not forget what is under way. Older ones are not: a turn lost for good holds at
  // most a day's reservation.
  if (limited) {
    const now = clock.now();
    const dayStart = localDay(now, timeZone).start;
    for (const turn of store.unfinishedTurns())
      if (turn.state === 'running' && turn.startedAt >= dayStart)
        reservations.began(conversationKey(turn.route), turn.turnId, [], undefined, now);
  }

  const today = (): SpendToday => {
    const day = localDay(clock.now(), timeZone);
    return {
      day: day.day,
      timeZone,
      agentUsd: store.spentSince(day.start),
      conversations: store.spentByConversationSince(day.start),
      limits,
    };
  };

  return {
    today,
    costToday(route) {
      const t = today();
      const key = route ? conversationKey(route) : undefined;
      return {
        day: t.day,
        agentUsd: t.agentUsd,
        conversationUsd:
          key === undefined
            ? undefined
            : (t.conversations.find((c) => conversationKey(c.route) === key)?.usd ?? 0),
        dailyUsd: limits.dailyUsd,
      };
    },
    observe(frame) {
      try {
        observe(frame);
      } catch (error) {
        logger.error({ event: 'spend_not_recorded', error: String(error) }, 'a turn’s cost was not recorded');
      }
    },
    weigh,
    offer,
    allows(route, userId) {
      if (!limited) return { admit: true };
      const now = clock.now();
      return answer(verdictFor(route, userId, now), route, userId, now, false);
    },
    admitCommand(commandId, route, userId) {
      const now = clock.now();
      const verdict = limited
        ? answer(verdictFor(route, userId, now), route, userId, now)
        : { admit: true as const };
      if (verdict.admit !== true) return verdict;
      const work = commandWork(commandId);
      store.spendStarted(work, route, userId);
      reservations.began(conversationKey(route), work, [], userId, now);
      return verdict;
    },
    chargeTranscription(id, route, userId, seconds) {
      const perMinute = options.spend?.transcriptionUsdPerMinute ?? DEFAULT_TRANSCRIPTION_USD_PER_MINUTE;
      const work = `voice:${id}`;
      store.spendStarted(work, route, userId);
      store.spendEnded(work, route, (Math.max(0, seconds) / 60) * perMinute, clock.now());
    },
    estimateUsd,
  };
}

/** The spend row and reservation of a command (`/compact`), by its id. */
function commandWork(commandId: string): string {
  return `cmd:${commandId}`;
}
