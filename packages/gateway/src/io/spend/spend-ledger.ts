/**
 * The daily budgets' shell: it records what each turn cost and whose message opened it (from the
 * bridge's `turn_started` and `turn_ended`), sums today's spending in the agent's time zone, and asks
 * the rule (`core/spend/spend-gate.ts`) whether a new turn may start. `/status`, `switchyard status` and the
 * metrics read today's cost from here too.
 *
 * Where it gates: {@link SpendLedger.check} is called where a message is handed to the bridge — the one
 * `forward` of a Telegram message and of a run (`compose.ts`), and the boot's re-send of the inbox
 * (`io/ops/boot.ts`) — so no new turn starts over a budget by any path. A refused message is marked not read
 * by the caller (the turn machine's `messages_unread`), so it leaves the inbox and is never re-sent.
 *
 * Ownership: the rows are the store's (`store/spend-table.ts`); this module holds nothing but options.
 */
import {
  type AppFrame,
  type Clock,
  conversationKey,
  type FrameOf,
  type Logger,
  type Route,
} from '@switchyard/protocol';
import {
  budgetNotice,
  noticeKey,
  type SpendLimits,
  type SpendOptions,
  spendVerdict,
} from '../../core/spend/spend-gate.js';
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

/** Whether a message may start a turn; when not, why (short), and the notice when it is due today. */
export type SpendCheck =
  | { admit: true }
  | { admit: false; scope: 'agent' | 'user'; reason: string; notice: string | undefined };

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
  /** Sees every frame from the bridge on its way in; records turns' starts and costs. */
  observe(frame: AppFrame): void;
  /** Wraps a frame handler so {@link SpendLedger.observe} sees each frame first. */
  observeFrames<F extends AppFrame>(handler: (frame: F) => void): (frame: F) => void;
  /** Whether `frame` may start a new turn now (see the module comment). */
  check(frame: Pick<FrameOf<'user_message'>, 'route' | 'sender'>): SpendCheck;
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
  >;
  spend?: SpendOptions | undefined;
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

  const observe = (frame: AppFrame): void => {
    if (frame.type === 'turn_started') {
      const opener = frame.inboundIds[0];
      const row = opener === undefined ? undefined : store.getInbound(opener);
      // An automation's inbound row (a schedule, a webhook) has no message in the chat to reply to.
      const message = row && row.telegramMessageId > 0 ? row.telegramMessageId : undefined;
      store.spendStarted(frame.turnId, frame.route, row ? spenderOf(row.frame) : undefined, message);
    } else if (frame.type === 'turn_ended') {
      if (frame.costUsd === undefined) return;
      // The route matters only for a turn whose start was never recorded; the turn table knows it.
      const route = store.getTurn(frame.turnId)?.route ?? { chatId: 0 };
      store.spendEnded(frame.turnId, route, frame.costUsd, clock.now());
    }
  };

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
    observe,
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
    observeFrames: (handler) => (frame) => {
      try {
        observe(frame);
      } catch (error) {
        logger.error({ event: 'spend_not_recorded', error: String(error) }, 'a turn’s cost was not recorded');
      }
      handler(frame);
    },
    check(frame) {
      if (limits.dailyUsd === undefined && limits.perUserDailyUsd === undefined) return { admit: true };
      const now = clock.now();
      const day = localDay(now, timeZone);
      const userId = spenderOf(frame);
      const verdict = spendVerdict(limits, {
        agentUsd: store.spentSince(day.start),
        userUsd: userId === undefined ? undefined : store.spentSince(day.start, userId),
      });
      if (verdict.admit) return verdict;
      const first = store.noteBudgetNotice(
        noticeKey(day.day, verdict, { userId, chatId: frame.route.chatId }),
        now,
      );
      logger.info({ event: 'budget_refused', scope: verdict.scope, user: userId, chat: frame.route.chatId });
      return {
        admit: false,
        scope: verdict.scope,
        reason: verdict.reason,
        notice: first ? budgetNotice(verdict, localTimeText(day.end, timeZone)) : undefined,
      };
    },
  };
}

/**
 * The gate where a message is handed to the bridge: whether the budgets let `frame` start a turn. When
 * not, the turn machine marks it not read (its marker says why, and it leaves the inbox, so it is never
 * re-sent) and its sender gets the day's notice when one is due.
 */
export function budgetGate(
  spend: Pick<SpendLedger, 'check'>,
  deps: {
    turns: { refused(inboundIds: readonly string[], reason: string): void };
    reply(route: Route, text: string): void;
    refused(scope: 'agent' | 'user'): void;
  },
): (frame: FrameOf<'user_message'>) => boolean {
  return (frame) => {
    const check = spend.check(frame);
    if (check.admit) return true;
    deps.refused(check.scope);
    // Every caller hands the turn machine the message before the frame (the handler, the injector), or
    // the machine adopts it from the store (the boot's re-send): it is marked at once.
    deps.turns.refused([frame.inboundId], check.reason);
    if (check.notice) deps.reply(frame.route, check.notice);
    return false;
  };
}
