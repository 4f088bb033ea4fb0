/**
 * Durable intake: the `getUpdates` that the runner polls through. Each batch is written to SQLite
 * before it is returned, and the offset comes from SQLite too, so the next `getUpdates` — the one that
 * confirms the batch to Telegram — happens only after the batch is durable. A `kill -9` at any moment
 * loses nothing: updates recorded but not handled are replayed at the next boot, and updates Telegram
 * sends again are dropped by `update_id`.
 *
 * Polling failures never reach the runner (which would stop on a 409): a conflict with another poller
 * is logged as an error the operator can act on and retried with capped backoff, and a long poll that
 * outlives its timeout (a stalled connection) is aborted and restarted.
 *
 * The next poll waits one turn of the event loop (`setImmediate`): the runner asks for it the moment
 * it has handed the last batch to the handlers, whose way to the bridge (the inbox row, the frame on
 * the socket) runs on promise continuations only. Without the wait, preparing the next HTTP request
 * (grammY's transformers, the request itself) came first and cost each message ~0.6 ms on its way to
 * Claude (`pnpm bench`, ingress); with it, the poll goes out a fraction of a millisecond later.
 *
 * Stopping aborts the poll in flight (the `signal` option, or the runner's own). An aborted poll's
 * updates were never recorded, so they were never confirmed either: the offset comes from SQLite, and
 * Telegram hands unconfirmed updates out again to the next process.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Clock, type Logger, systemClock } from '@switchyard/protocol';
import type { Message, Update } from 'grammy/types';
import type { GatewayStore } from '../../store/store.js';
import { type BotApi, errorCode, errorText } from '../telegram/bot-api.js';

/** The update kinds the gateway asks for. */
export const ALLOWED_UPDATES = ['message', 'callback_query', 'stopped_message_generation'] as const;

/** What the durable source needs. */
export interface UpdateSourceOptions {
  api: Pick<BotApi, 'getUpdates'>;
  store: Pick<GatewayStore, 'nextUpdateOffset' | 'recordUpdates'>;
  /** Whether an update's content may be kept (the allowlist); others are recorded by id only. */
  keep(update: Update): boolean;
  logger: Logger;
  /** Long-poll timeout in seconds; default 30. */
  pollTimeoutSec?: number;
  /** How long past the poll timeout a request may hang before it counts as stalled; default 15 s. */
  stallGraceMs?: number;
  /** Backoff after failures; default 1 s doubling to 60 s. */
  backoff?: { initialMs: number; maxMs: number };
  /** The bot's username, for the "polling as @name" line logged when the first poll succeeds. */
  botUsername?: string;
  /** Told on every failure and recovery, for `/status`. */
  onHealth?(health: { ok: boolean; error?: string }): void;
  /** Aborts the poll in flight and any backoff wait, for good (the gateway's stop). */
  signal?: AbortSignal;
  /** Time for the stall timer and the backoff; default the system clock. */
  clock?: Clock;
}

/**
 * The abort signal `@grammyjs/runner` hands its source: an instance of the `abort-controller` npm shim,
 * not Node's `AbortSignal`. Node's `AbortSignal.any` accepts it without complaint but never sees it
 * abort, and fetch ignores it — which is why a stopping runner used to wait out the whole long poll.
 */
export interface ShimSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
}

/** A `getUpdates` for `@grammyjs/runner`'s bot adapter; returns only updates not seen before. */
export type DurableGetUpdates = (args: { limit: number }, signal: ShimSignal) => Promise<Update[]>;

/** A Node `AbortSignal` that aborts when `signal` (native or the runner's shim) does. */
export function nativeSignal(signal: ShimSignal): AbortSignal {
  if (signal instanceof AbortSignal) return signal;
  const controller = new AbortController();
  if (signal.aborted) controller.abort();
  else signal.addEventListener('abort', () => controller.abort(), { once: true });
  return controller.signal;
}

/** Creates the durable `getUpdates`; see the module comment. */
export function createUpdateSource(options: UpdateSourceOptions): DurableGetUpdates {
  const { api, store, logger } = options;
  const clock = options.clock ?? systemClock;
  const timeout = options.pollTimeoutSec ?? 30;
  const grace = options.stallGraceMs ?? 15_000;
  const backoff = options.backoff ?? { initialMs: 1000, maxMs: 60_000 };
  // Failures in a row, across calls: every one is logged as it happens (the backoff spaces them), and
  // the first success after them says polling is back.
  let failures = 0;
  let announced = false;
  const succeeded = (): void => {
    if (!announced) {
      announced = true;
      const bot = options.botUsername === undefined ? 'this bot' : `@${options.botUsername}`;
      logger.info({ event: 'polling', bot }, `polling as ${bot}`);
    } else if (failures > 0) {
      logger.info({ event: 'poll_recovered', failures }, `polling again after ${failures} failed attempt(s)`);
    }
    failures = 0;
  };

  return async (args, runnerSignal) => {
    // The last batch's handlers reach the bridge first (see the module comment).
    await nextTurn();
    const signal = options.signal
      ? AbortSignal.any([options.signal, nativeSignal(runnerSignal)])
      : nativeSignal(runnerSignal);
    let delay = backoff.initialMs;
    for (;;) {
      const stall = new AbortController();
      const timer = clock.setTimeout(() => stall.abort(), timeout * 1000 + grace);
      try {
        const updates = await api.getUpdates(
          {
            offset: store.nextUpdateOffset(),
            limit: args.limit,
            timeout,
            allowed_updates: [...ALLOWED_UPDATES],
          },
          // grammY types its signal parameter with the abort-controller shim; Node's signal is what it uses.
          AbortSignal.any([signal, stall.signal]) as Parameters<BotApi['getUpdates']>[1],
        );
        const fresh = new Set(
          store.recordUpdates(
            updates.map((u) => ({ updateId: u.update_id, payload: options.keep(u) ? u : undefined })),
          ),
        );
        succeeded();
        options.onHealth?.({ ok: true });
        return updates.filter((u) => fresh.has(u.update_id));
      } catch (error) {
        if (signal.aborted) throw error;
        if (stall.signal.aborted) {
          logger.warn(
            { event: 'poll_stalled', afterMs: timeout * 1000 + grace },
            'getUpdates stalled; polling again',
          );
          options.onHealth?.({ ok: false, error: 'polling stalled' });
          continue;
        }
        const code = errorCode(error);
        const text = errorText(error);
        failures++;
        const attempt = failures;
        if (code === 409) {
          logger.error(
            { event: 'poll_conflict', retryInMs: delay, attempt },
            'another process is polling this bot token (or a webhook is set): stop the other gateway or delete the webhook; retrying',
          );
        } else if (code === 401) {
          logger.error(
            { event: 'poll_unauthorized', retryInMs: delay, attempt },
            'Telegram rejected the bot token: check the token in the config; retrying',
          );
        } else {
          logger.warn(
            { event: 'poll_failed', error: text, retryInMs: delay, attempt },
            'cannot reach Telegram (getUpdates failed); retrying',
          );
        }
        options.onHealth?.({
          ok: false,
          error: code === 409 ? 'conflict: another process polls this token' : text,
        });
        await clock.sleep(delay, signal);
        delay = Math.min(delay * 2, backoff.maxMs);
      } finally {
        clock.clearTimeout(timer);
      }
    }
  };
}

/** The gateway's durable id for an inbound message: stable across redelivery and replays. */
export function inboundIdOf(message: Pick<Message, 'chat' | 'message_id'>): string {
  return `tg:${message.chat.id}:${message.message_id}`;
}

/** Unsupported message kinds, with the word used in the reply. */
export function unsupportedKind(message: Message): string | undefined {
  if (message.video || message.animation) return 'Videos';
  if (message.sticker) return 'Stickers';
  if (message.location || message.venue) return 'Locations';
  if (message.contact) return 'Contacts';
  if (message.poll) return 'Polls';
  return undefined;
}
