/**
 * What `/status`, `switchyard status` and the settings panel read: the bridge's latest `status` of each
 * conversation and of the agent, polling's health, and the gateway's own view — the bridge connected or
 * not, the running turns, the inbox, open prompts, pins, the conversation's last error, its settings,
 * today's cost and a usage limit it waits out. The board owns the first two (the frames and the health
 * reports write them here and nowhere else); the rest it reads from their owners when asked.
 */
import { conversationKey, type FrameOf, type Route } from '@switchyard/protocol';
import type { UsageLimits } from '../../core/turns/usage-limit.js';
import type { GatewayStatus } from '../../options.js';
import type { GatewayStore } from '../../store/store.js';
import type { Prompts } from '../prompts/prompts.js';
import type { ConversationSettingsService } from '../settings/conversation-settings.js';
import type { SpendLedger } from '../spend/spend-ledger.js';
import type { Turns } from '../turns/turns.js';
import type { LastErrors } from './last-errors.js';

/** What the board reads from. */
export interface StatusBoardOptions {
  store: Pick<GatewayStore, 'inboxLength' | 'listPins'>;
  turns: Pick<Turns, 'live'>;
  prompts: Pick<Prompts, 'open'>;
  lastErrors: Pick<LastErrors, 'of'>;
  settings: Pick<ConversationSettingsService, 'get'>;
  spend: Pick<SpendLedger, 'costToday'>;
  /** The conversations waiting out a usage limit (`core/turns/usage-limit.ts`). */
  limits?: Pick<UsageLimits, 'until'>;
  /** The agent's time zone, in which `/status` says a reset time. */
  timeZone?: string | undefined;
  /** Whether the bridge is connected now. */
  connected(): boolean;
}

/** The board's handle. */
export interface StatusBoard {
  /** What `/status` shows: the agent's (no route), or one conversation's. */
  status(route?: Route): GatewayStatus;
  /** The bridge's `status` frame: the agent's, and its conversation's when it names one. */
  noteStatus(frame: FrameOf<'status'>): void;
  /** Polling's health, as the intake reports it. */
  notePolling(health: { ok: boolean; error?: string }): void;
}

/** Creates the board; it holds only the latest frames and health, replaced as they come. */
export function createStatusBoard(options: StatusBoardOptions): StatusBoard {
  /** The latest `status` of each conversation (by `conversationKey`). */
  const conversationStatus = new Map<string, FrameOf<'status'>>();
  const latest: { agent?: FrameOf<'status'>; polling: { ok: boolean; error?: string } } = {
    polling: { ok: true },
  };
  return {
    status(route) {
      const key = route ? conversationKey(route) : undefined;
      const own = key !== undefined ? conversationStatus.get(key) : latest.agent;
      const running = options.turns.live();
      const limitedUntil = route ? options.limits?.until(route) : undefined;
      return {
        bridgeConnected: options.connected(),
        agentState: own?.state,
        model: own?.model,
        mode: own?.mode,
        runningTurns: key === undefined ? running : running.filter((t) => conversationKey(t.route) === key),
        inbox: options.store.inboxLength(),
        openPrompts: options.prompts.open(),
        pins: options.store.listPins().length,
        lastError: options.lastErrors.of(route),
        polling: latest.polling,
        ...(route ? { settings: options.settings.get(route) } : {}),
        costToday: options.spend.costToday(route),
        ...(limitedUntil !== undefined ? { usageLimitUntil: limitedUntil } : {}),
        ...(options.timeZone !== undefined ? { timeZone: options.timeZone } : {}),
      };
    },
    noteStatus(frame) {
      latest.agent = frame;
      if (frame.route) conversationStatus.set(conversationKey(frame.route), frame);
    },
    notePolling(health) {
      latest.polling = health;
    },
  };
}
