/**
 * The automation's one wiring step, called by `compose.ts`: the injector (`inject.ts`), whose
 * notes go out through the courier like any reply, and the schedules (`schedules.ts`) over it.
 * Builds, starts nothing: `gateway.ts` starts both after the boot and stops them before the turns.
 */
import type { Clock, FrameOf, GatewayToBridge, Logger, Route } from '@switchyard/protocol';
import type { InlineButton } from '../../core/commands/command-texts.js';
import { threadParams } from '../../core/intake/route.js';
import type { BudgetVerdict } from '../../core/turns/turn-steps.js';
import type { GatewayStore } from '../../store/store.js';
import { type BotApi, errorText } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { Turns } from '../turns/turns.js';
import { createInjector, type InjectorHandle } from './inject.js';
import type { ScheduleOptions } from './schedule-options.js';
import { createSchedules, type Schedules } from './schedules.js';

/** What the automation is built from. */
export interface AutomationOptions {
  schedules: ScheduleOptions | undefined;
  store: GatewayStore;
  turns: Pick<Turns, 'arrive' | 'running' | 'readIn'>;
  courier: Courier;
  /** The journaled API: a note's send is found again after a crash like any other. */
  api: Pick<BotApi, 'sendMessage'>;
  /** Hands a frame to the bridge's channel. */
  send(frame: GatewayToBridge): Promise<void>;
  /** Today's budget's verdict on a run, asked before the turn machine takes it (`io/spend/spend-ledger.ts`). */
  budget(frame: FrameOf<'user_message'>): BudgetVerdict;
  /** Hands a user message to the bridge, as a Telegram message's is (`io/intake/telegram-handlers.ts`). */
  forward(frame: FrameOf<'user_message'>): void;
  /** The bridge may address this chat. */
  noteChat(chatId: number): void;
  /** Whether a conversation waits out its usage limit (`core/turns/usage-limit.ts`): its schedules wait too. */
  limited?(route: Route): boolean;
  reply(route: Route, text: string): Promise<unknown>;
  replyWithButtons(route: Route, text: string, buttons: InlineButton[][]): Promise<unknown>;
  /** Whether a user is on the allowlist now (a chat schedule's creator who is not has it paused). */
  allowedUser(userId: number): boolean;
  clock: Clock;
  logger: Logger;
}

/** Builds the injector and the schedules. */
export function createAutomation(o: AutomationOptions): { injector: InjectorHandle; schedules: Schedules } {
  const logger = o.logger.child({ component: 'automation' });
  const injector = createInjector({
    store: o.store,
    turns: o.turns,
    budget: o.budget,
    forward: o.forward,
    sendNote: (route, text) =>
      o.courier
        .call(route.chatId, () => o.api.sendMessage(route.chatId, text, threadParams(route)))
        .then((sent) => sent?.message_id)
        .catch((error: unknown) => {
          logger.warn({ event: 'run_note_failed', error: errorText(error) });
          return undefined;
        }),
    noteChat: o.noteChat,
    clock: o.clock,
    logger,
  });
  const schedules = createSchedules({
    options: o.schedules,
    store: o.store,
    injector,
    running: (route) => o.turns.running(route),
    ...(o.limited ? { limited: o.limited } : {}),
    readIn: (route) => o.turns.readIn(route),
    answer: (frame) => void o.send(frame).catch(() => {}),
    reply: (route, text) => void o.reply(route, text),
    replyWithButtons: (route, text, buttons) => void o.replyWithButtons(route, text, buttons),
    allowedUser: o.allowedUser,
    clock: o.clock,
    logger: o.logger.child({ component: 'schedules' }),
  });
  return { injector, schedules };
}
