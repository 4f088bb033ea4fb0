/**
 * The gateway's boot sequence, from composed services (`compose.ts`) to polling. The order is fixed and
 * each step says why it comes where it does:
 *
 * identify the bot (`getMe`, retried until Telegram answers) → register commands if they changed →
 * sweep pins (I4: before any traffic) → reconcile sends a crash left in flight (before anything else
 * may send: see `io/telegram/send-journal.ts`) → listen for the bridge → replay updates recorded but not
 * handled → re-send the inbox → re-attach unfinished turns → start polling.
 */
import { type RunnerHandle, run } from '@grammyjs/runner';
import { type Clock, describeError, type Logger, systemClock } from '@switchyard/protocol';
import type { Bot } from 'grammy';
import type { Update } from 'grammy/types';
import type { GatewayOptions } from '../../options.js';
import type { SweepReport } from '../card/pins.js';
import { registerCommands } from '../commands/command-registration.js';
import { createUpdateSource } from '../intake/intake.js';
import { errorText } from '../telegram/bot-api.js';
import type { Services } from './services.js';

/** What the boot sequence needs besides the services. */
export interface BootOptions {
  config: Pick<GatewayOptions, 'polling' | 'clock'>;
  /** Chats whose stray pins the sweep checks. */
  knownChats: number[];
  /** Aborted by the gateway's stop: ends the long poll in flight. */
  signal: AbortSignal;
  logger: Logger;
}

/** What a finished boot leaves running, and what it found. */
export interface Booted {
  runner: RunnerHandle;
  sweep: SweepReport;
}

/** Runs the boot sequence (see the module comment); resolves once polling has started. */
export async function boot(services: Services, options: BootOptions): Promise<Booted> {
  const { bot, store, pins, journal, endpoint, turns } = services;
  const { config, logger } = options;
  const clock = config.clock ?? systemClock;
  await initBot(bot, clock, logger);
  await registerCommands(bot.api, store, logger);
  const sweep = await pins.sweep(options.knownChats, bot.botInfo.id);
  const reconciled = await journal.reconcile();
  await endpoint.start();

  // Updates recorded before a crash but never handled: handle them now, in order, before polling.
  for (const u of store.unhandledUpdates()) {
    if (u.payload === undefined) store.markHandled(u.updateId);
    else await bot.handleUpdate(u.payload as Update);
  }
  // A row whose frame the channel refuses (stored before intake cut fields to the limits) is marked
  // unread and its sender told, instead of being offered again at every boot.
  // A message queued before a restart starts a new turn too: it is offered as a new one is, past the
  // daily budgets (`io/spend/spend-ledger.ts`), then to the bridge (`io/bridge/forward.ts`).
  for (const row of store.queuedInbound()) services.offer(row.frame);
  turns.resume();

  const polling = config.polling;
  const getUpdates = createUpdateSource({
    api: bot.api,
    store,
    keep: services.allowed,
    botUsername: bot.botInfo.username,
    logger: logger.child({ component: 'intake' }),
    onHealth: services.onPollingHealth,
    ...(polling?.timeoutSec !== undefined ? { pollTimeoutSec: polling.timeoutSec } : {}),
    ...(polling?.stallGraceMs !== undefined ? { stallGraceMs: polling.stallGraceMs } : {}),
    ...(polling?.backoff ? { backoff: polling.backoff } : {}),
    signal: options.signal,
    clock,
  });
  const runner = run(
    {
      handleUpdate: (update: Update) => bot.handleUpdate(update),
      errorHandler: (error: unknown) => {
        logger.error({ event: 'runner_error', error: describeError(error) });
      },
      // The runner's signal is the abort-controller shim's; the source turns it into a native one.
      api: { getUpdates },
    },
    { runner: { silent: true } },
  );
  logger.info({ event: 'started', sweep, reconciled }, 'gateway started');
  return { runner, sweep };
}

/** `bot.init()` (getMe), retried with capped backoff: the gateway cannot do anything without it. */
async function initBot(bot: Bot, clock: Clock, logger: Logger): Promise<void> {
  for (let delay = 1000; ; delay = Math.min(delay * 2, 60_000)) {
    try {
      await bot.init();
      return;
    } catch (error) {
      logger.error(
        { event: 'get_me_failed', error: errorText(error), retryInMs: delay },
        'cannot reach Telegram (getMe); check the token and the network',
      );
      await clock.sleep(delay);
    }
  }
}
