/**
 * Every Bot API call aimed at a chat goes through the courier: one lane per chat, paced by the
 * {@link Budget}, so that streaming, cards, placeholders and prompts share the chat's allowance
 * instead of competing for it.
 *
 * Invariants:
 * - A lane runs one call at a time, urgent before high before normal before low, first-in first-out
 *   within a level. Every level spends the same budget: priority decides only the order of the queue.
 * - A call given a `key` replaces the pending call with the same key: stale edits are dropped in favour
 *   of the latest text, never queued. The replaced call's promise resolves with `undefined`.
 * - The thunk is evaluated when the call goes out, so it can read the newest state at that moment.
 */
import { type Clock, systemClock } from '@switchyard/protocol';
import type { Budget } from './budget.js';

/**
 * How soon a call should go: placeholders and prompts are `urgent`; closing a progress card (its final
 * edit and its unpin) is `high`, so a finished or superseded card does not stay pinned while a backlog of
 * replies drains; replies and notices are `normal`; streamed edits are `low`.
 */
export type Priority = 'urgent' | 'high' | 'normal' | 'low';

const RANK = { urgent: 0, high: 1, normal: 2, low: 3 } as const satisfies Record<Priority, number>;

/** Per-call options. */
export interface CourierCall {
  priority?: Priority;
  /** Calls with the same key in the same chat coalesce: only the latest pending one runs. */
  key?: string;
}

/** The per-chat call scheduler; see the module comment. */
export interface Courier {
  /** Queues `run` on the chat's lane; resolves with its result (or `undefined` when superseded). */
  call<T>(chatId: number, run: () => Promise<T>, options?: CourierCall): Promise<T | undefined>;
  /**
   * Raises the pending call with `key` in a chat's lane to `priority` (never lowers it); false when no
   * such call waits. For work that became urgent after it was queued: a card's live edit, once the card
   * is closing, holds up its final edit and unpin.
   */
  promote(chatId: number, key: string, priority: Priority): boolean;
  /** Pending calls in a chat's lane (not counting the one in flight). */
  pending(chatId: number): number;
  /** Resolves when every lane is empty, dropping low-priority calls first; for shutdown. */
  drain(): Promise<void>;
}

interface Job {
  rank: number;
  key: string | undefined;
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Lane {
  jobs: Job[];
  busy: boolean;
  idle: (() => void)[];
}

/** Creates a courier over a budget, pacing on `clock` (default the system clock). */
export function createCourier(budget: Budget, clock: Pick<Clock, 'now' | 'sleep'> = systemClock): Courier {
  const lanes = new Map<number, Lane>();

  const pump = async (chatId: number, lane: Lane): Promise<void> => {
    lane.busy = true;
    try {
      for (;;) {
        const head = peek(lane);
        if (!head) break;
        // Low-priority calls leave one token for urgent ones; sleep in short steps so that a more
        // urgent call arriving meanwhile is picked up first.
        const wait = budget.delay(chatId, clock.now(), head.rank === RANK.low ? 1 : 0);
        if (wait > 0) {
          await clock.sleep(Math.min(wait, 100));
          continue;
        }
        const job = lane.jobs.splice(lane.jobs.indexOf(head), 1)[0] as Job;
        budget.take(chatId, clock.now());
        try {
          job.resolve(await job.run());
        } catch (error) {
          job.reject(error);
        }
      }
    } finally {
      lane.busy = false;
      lanes.delete(chatId);
      for (const done of lane.idle.splice(0)) done();
    }
  };

  return {
    call<T>(chatId: number, run: () => Promise<T>, options: CourierCall = {}): Promise<T | undefined> {
      let lane = lanes.get(chatId);
      if (!lane) {
        lane = { jobs: [], busy: false, idle: [] };
        lanes.set(chatId, lane);
      }
      const rank = RANK[options.priority ?? 'normal'];
      const promise = new Promise<T | undefined>((resolve, reject) => {
        const job: Job = { rank, key: options.key, run, resolve: resolve as (v: unknown) => void, reject };
        const l = lane as Lane;
        const stale = job.key === undefined ? -1 : l.jobs.findIndex((j) => j.key === job.key);
        if (stale >= 0) {
          // Take the stale call's place in the queue, so a steady stream is not starved by newer work.
          const [old] = l.jobs.splice(stale, 1, job);
          old?.resolve(undefined);
        } else {
          l.jobs.push(job);
        }
      });
      if (!lane.busy) void pump(chatId, lane);
      return promise;
    },
    promote(chatId, key, priority) {
      const job = lanes.get(chatId)?.jobs.find((j) => j.key === key);
      if (!job) return false;
      job.rank = Math.min(job.rank, RANK[priority]);
      return true;
    },
    pending(chatId) {
      return lanes.get(chatId)?.jobs.length ?? 0;
    },
    async drain() {
      const waits: Promise<void>[] = [];
      for (const lane of lanes.values()) {
        for (const job of lane.jobs.filter((j) => j.rank === RANK.low)) job.resolve(undefined);
        lane.jobs = lane.jobs.filter((j) => j.rank !== RANK.low);
        if (lane.busy) waits.push(new Promise((resolve) => lane.idle.push(resolve)));
      }
      await Promise.all(waits);
    },
  };
}

/** The most urgent job, oldest first within its level. */
function peek(lane: Lane): Job | undefined {
  let best: Job | undefined;
  for (const job of lane.jobs) if (!best || job.rank < best.rank) best = job;
  return best;
}
