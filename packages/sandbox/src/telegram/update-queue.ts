/**
 * The bot's update queue and `getUpdates` long polling, with Telegram's semantics:
 *
 * - updates stay queued until a later `getUpdates` confirms them with `offset` > their `update_id`
 *   (a negative offset keeps only the last `-offset`); unconfirmed updates are handed out again;
 * - with `timeout` > 0 and nothing queued, the call waits until an update arrives or the timeout ends;
 * - only one poll may wait: a new `getUpdates` ends the waiting one with 409 "Conflict: terminated by
 *   other getUpdates request; …", exactly what two bot instances on one token see;
 * - `allowed_updates` is remembered across calls and applies to updates created after it.
 *
 * Owns one timer per waiting poll and one immediate per delivery batch; {@link UpdateQueue.stop}
 * clears both and answers the waiting poll with an empty list.
 */
import { BotApiError, refuse } from './api-error.js';
import type { EventHub } from './events.js';
import type { UpdateKind, WireUpdate } from './wire.js';

/** The `getUpdates` parameters. */
export interface PollRequest {
  offset?: number | undefined;
  /** 1–100, default 100. */
  limit?: number | undefined;
  /** Seconds to wait when nothing is queued; 0 answers at once. */
  timeout?: number | undefined;
  allowedUpdates?: readonly string[] | undefined;
}

interface WaitingPoll {
  limit: number;
  timer: NodeJS.Timeout;
  finish(result: WireUpdate[] | BotApiError): void;
}

/** The default set when `allowed_updates` is empty or never given (Telegram's default). */
const DEFAULT_KINDS: ReadonlySet<string> = new Set<UpdateKind>([
  'message',
  'edited_message',
  'callback_query',
  'stopped_message_generation',
]);

/** See the file comment. */
export class UpdateQueue {
  readonly #hub: EventHub;
  readonly #now: () => number;
  #queue: WireUpdate[] = [];
  #nextId: number;
  #allowed: ReadonlySet<string> = DEFAULT_KINDS;
  #waiting: WaitingPoll | undefined;
  #flush: NodeJS.Immediate | undefined;
  #stopped = false;
  /** Set by setWebhook; getUpdates is refused while it is. */
  webhookUrl = '';

  constructor(hub: EventHub, now: () => number, firstUpdateId: number) {
    this.#hub = hub;
    this.#now = now;
    this.#nextId = firstUpdateId;
  }

  /**
   * Queues an update of `kind` (unless `allowed_updates` excludes it) and wakes a waiting poll on the
   * next turn of the event loop, so updates injected together are delivered together.
   */
  push(kind: UpdateKind, payload: Omit<WireUpdate, 'update_id'>): WireUpdate | undefined {
    if (!this.#allowed.has(kind)) return undefined;
    const update: WireUpdate = { update_id: this.#nextId++, ...payload };
    this.#queue.push(update);
    if (this.#waiting && !this.#flush && !this.#stopped) {
      this.#flush = setImmediate(() => {
        this.#flush = undefined;
        const waiting = this.#waiting;
        if (waiting && this.#queue.length > 0) waiting.finish(this.#take(waiting.limit));
      });
    }
    return structuredClone(update);
  }

  /** Queued updates not yet confirmed by the bot, oldest first. */
  pending(): WireUpdate[] {
    return structuredClone(this.#queue);
  }

  /** Drops queued updates (`deleteWebhook` with `drop_pending_updates`). */
  dropPending(): void {
    this.#queue = [];
  }

  /** Answers a `getUpdates` call; rejects with a {@link BotApiError} (409) when superseded. */
  poll(request: PollRequest, signal: AbortSignal): Promise<WireUpdate[]> {
    if (this.webhookUrl !== '') return Promise.reject(refuse('webhookActive'));
    this.#waiting?.finish(refuse('getUpdatesConflict'));
    this.#confirm(request.offset);
    if (request.allowedUpdates !== undefined) {
      this.#allowed = request.allowedUpdates.length === 0 ? DEFAULT_KINDS : new Set(request.allowedUpdates);
    }
    const limit = Math.min(100, Math.max(1, request.limit ?? 100));
    const timeout = Math.max(0, request.timeout ?? 0);
    if (this.#queue.length > 0 || timeout === 0 || this.#stopped || signal.aborted) {
      return Promise.resolve(this.#take(limit));
    }
    return new Promise<WireUpdate[]>((resolve, reject) => {
      const onAbort = (): void => waiting.finish([]);
      const waiting: WaitingPoll = {
        limit,
        timer: setTimeout(() => waiting.finish([]), timeout * 1000),
        finish: (result) => {
          if (this.#waiting !== waiting) return;
          this.#waiting = undefined;
          clearTimeout(waiting.timer);
          signal.removeEventListener('abort', onAbort);
          if (result instanceof BotApiError) reject(result);
          else resolve(result);
        },
      };
      this.#waiting = waiting;
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Ends any waiting poll with an empty answer and refuses to wait again. */
  stop(): void {
    this.#stopped = true;
    if (this.#flush) clearImmediate(this.#flush);
    this.#flush = undefined;
    this.#waiting?.finish([]);
  }

  #confirm(offset: number | undefined): void {
    if (offset === undefined || offset === 0) return;
    if (offset < 0) {
      this.#queue = this.#queue.slice(offset);
      return;
    }
    this.#queue = this.#queue.filter((u) => u.update_id >= offset);
  }

  #take(limit: number): WireUpdate[] {
    const batch = this.#queue.slice(0, limit);
    if (batch.length > 0) {
      this.#hub.emit({
        type: 'updates_delivered',
        updateIds: batch.map((u) => u.update_id),
        at: this.#now(),
      });
    }
    return structuredClone(batch);
  }
}
