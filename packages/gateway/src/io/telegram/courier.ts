/**
 * Every Bot API call aimed at a chat goes through the courier: one lane per chat, paced by the
 * {@link Budget}, so that answers, prompts, reactions, markers and the card share the chat's allowance
 * instead of competing for it.
 *
 * The order (what a lane runs next), most urgent first:
 * 1. `prompt`: permission prompts and questions, the words of a message that will not be read, the send
 *    journal's recovery — the user must act on them or is waiting on them.
 * 2. `content`: a turn's answer (its first message, its final render) and notices.
 * 3. `closing`: a progress card closing (its final edit, its unpin), first among the cosmetics.
 * 4. `cosmetic`: reactions, the fallback marker message, card sends.
 * 5. `stream`: streamed edits of an answer and of a card.
 * So an answer never waits behind a reaction, a marker edit or a card update: content (1–2) always
 * goes before cosmetics (3–5), first-in first-out within a level, and cosmetic and streamed calls leave
 * a few of the chat's message slots (`COSMETIC_RESERVE`) to content that may come after them.
 *
 * Invariants:
 * - A lane runs one call at a time. A call whose windows are full does not hold up a call spending
 *   other windows (a reaction may go while an answer waits for a group's message slot, never the
 *   reverse within one kind).
 * - A call given a `key` replaces the pending call with the same key: stale edits are dropped in favour
 *   of the latest text, never queued. The replaced call's promise resolves with `undefined`.
 * - A call whose `stale()` says true when its turn comes is dropped unrun (resolves `undefined`) and
 *   spends nothing: a reaction the message has moved past, a marker edit whose text is shown already.
 * - The thunk is evaluated when the call goes out, so it can read the newest state at that moment.
 */
import { type Clock, systemClock } from '@switchyard/protocol';
import type { PaceKind } from '../../core/telegram/pace-windows.js';
import type { Budget } from '../../core/telegram/send-pacing.js';

/** How soon a call should go; see the module comment for the order and who uses each level. */
export type Priority = 'prompt' | 'content' | 'closing' | 'cosmetic' | 'stream';

const RANK = {
  prompt: 0,
  content: 1,
  closing: 2,
  cosmetic: 3,
  stream: 4,
} as const satisfies Record<Priority, number>;

/** Message slots a cosmetic or streamed call leaves free in a window: in a group, and in a private chat. */
export const COSMETIC_RESERVE = { group: 6, private: 1 } as const;

/** Per-call options. */
export interface CourierCall {
  /** Default `content`. */
  priority?: Priority;
  /** The windows it spends: a chat's messages (default) or its reactions. */
  spends?: PaceKind;
  /**
   * Slots of its windows the call leaves free for later calls (default: `COSMETIC_RESERVE` for cosmetic
   * and streamed message calls, none for others). A reaction on its way to a final state leaves room
   * for the final ones.
   */
  leave?: number;
  /** Asked when the call's turn comes: true drops it unrun (see the module comment). */
  stale?: () => boolean;
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
  /** Resolves when every lane is empty, dropping cosmetic and streamed calls first; for shutdown. */
  drain(): Promise<void>;
}

interface Job {
  rank: number;
  spends: PaceKind;
  leave: number | undefined;
  stale: (() => boolean) | undefined;
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
        if (lane.jobs.length === 0) break;
        const job = next(chatId, lane);
        if (typeof job === 'number') {
          // Sleep in short steps, so that a more urgent call arriving meanwhile is picked up first.
          await clock.sleep(Math.min(job, 100));
          continue;
        }
        lane.jobs.splice(lane.jobs.indexOf(job), 1);
        if (job.stale?.()) {
          job.resolve(undefined);
          continue;
        }
        budget.take(chatId, clock.now(), job.spends);
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

  /** The job to run now, or how long until one may: the most urgent that fits its windows. */
  const next = (chatId: number, lane: Lane): Job | number => {
    const now = clock.now();
    const reserve = chatId < 0 ? COSMETIC_RESERVE.group : COSMETIC_RESERVE.private;
    const waiting = new Set<PaceKind>();
    let wait = Number.POSITIVE_INFINITY;
    for (const job of byRank(lane)) {
      // A stale call is dropped as soon as it is looked at, whatever the windows say.
      if (job.stale?.()) return job;
      if (waiting.has(job.spends)) continue;
      const leave = job.leave ?? (job.rank >= RANK.closing && job.spends === 'message' ? reserve : 0);
      const delay = budget.delay(chatId, now, { kind: job.spends, reserve: leave });
      if (delay === 0) return job;
      waiting.add(job.spends);
      wait = Math.min(wait, delay);
    }
    return wait;
  };

  return {
    call<T>(chatId: number, run: () => Promise<T>, options: CourierCall = {}): Promise<T | undefined> {
      let lane = lanes.get(chatId);
      if (!lane) {
        lane = { jobs: [], busy: false, idle: [] };
        lanes.set(chatId, lane);
      }
      const rank = RANK[options.priority ?? 'content'];
      const promise = new Promise<T | undefined>((resolve, reject) => {
        const job: Job = {
          rank,
          spends: options.spends ?? 'message',
          leave: options.leave,
          stale: options.stale,
          key: options.key,
          run,
          resolve: resolve as (v: unknown) => void,
          reject,
        };
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
        const dropped = (j: Job) => j.rank >= RANK.cosmetic;
        for (const job of lane.jobs.filter(dropped)) job.resolve(undefined);
        lane.jobs = lane.jobs.filter((j) => !dropped(j));
        if (lane.busy) waits.push(new Promise((resolve) => lane.idle.push(resolve)));
      }
      await Promise.all(waits);
    },
  };
}

/** The lane's jobs, most urgent first, oldest first within a level. */
function byRank(lane: Lane): Job[] {
  return lane.jobs
    .map((job, index) => ({ job, index }))
    .sort((a, b) => a.job.rank - b.job.rank || a.index - b.index)
    .map((x) => x.job);
}
