/**
 * The pool of the agent's Claude processes, as pure rules: the slot plan (`maxLiveSessions`) and the
 * waiting queue in front of it. Each live process costs ~170 MB, so the cap is what bounds an agent's
 * memory.
 *
 * - **Slots.** A conversation that needs a process gets a free slot, or the least recently used idle
 *   process is stopped to make one, or it waits ({@link planSlot}); an idle process past `idleStopMs` is
 *   stopped ({@link idleExpired}).
 * - **Waiting queue.** Frames that need a process and cannot have one yet wait in arrival order (the
 *   shell keeps them durable in `waiting.json`). A conversation's frames keep their order: a frame
 *   arriving while one of its conversation waits queues behind it ({@link arrival}). A conversation that
 *   is backing off after a failure (`process-policy.ts`) is *blocked*: its frames wait, and the others
 *   are served past them ({@link nextToServe}).
 *
 * State: the waiting frames (the shell's array; these functions return new arrays, never mutate).
 * Inputs: an arriving frame, a slot freed, `/stop`, the tick's `now`. Actions: serve, queue, evict, stop.
 */
import type { FrameOf } from '@switchyard/protocol/common';

/** Frames that may need a process for a conversation that has none (the others never start one). */
export type StartingFrame = FrameOf<'user_message' | 'set_model' | 'set_mode' | 'compact' | 'clear'>;

/**
 * What to do with a frame that may need a process: `queue` when a frame of its conversation waits
 * before it or its conversation is blocked (order within a conversation is kept), `serve` otherwise.
 *
 * Duplicates are not this rule's concern: a resend of a waiting frame queues behind it, and delivery's
 * record of keys written (`commands.ts`, the bridge's one check) drops it when it is served.
 */
export function arrival(
  waiting: readonly StartingFrame[],
  frame: StartingFrame,
  keyOf: (frame: StartingFrame) => string,
  blocked: ReadonlySet<string>,
): 'queue' | 'serve' {
  const key = keyOf(frame);
  if (blocked.has(key) || waiting.some((w) => keyOf(w) === key)) return 'queue';
  return 'serve';
}

/**
 * The index of the waiting frame to serve next: the oldest whose conversation is not blocked (a
 * blocked conversation's frames all stay, so its order is kept), or `undefined` when none may go.
 */
export function nextToServe(
  waiting: readonly StartingFrame[],
  keyOf: (frame: StartingFrame) => string,
  blocked: ReadonlySet<string>,
): number | undefined {
  const index = waiting.findIndex((w) => !blocked.has(keyOf(w)));
  return index === -1 ? undefined : index;
}

/** The queue without `key`'s messages (`/stop` drops them; its commands still wait). */
export function withoutMessagesOf(
  waiting: readonly StartingFrame[],
  key: string,
  keyOf: (frame: StartingFrame) => string,
): StartingFrame[] {
  return waiting.filter((w) => keyOf(w) !== key || w.type !== 'user_message');
}

/** A conversation as the slot rule sees it. */
export interface SlotView {
  key: string;
  /** Holds a process (or is stopping one: its slot is not free yet). */
  live: boolean;
  /** May be stopped now: no turn, prompt, command or held item (see `Conversation.evictable`). */
  evictable: boolean;
  lastActiveAt: number;
}

/** What to do for a conversation that needs a process. */
export type SlotPlan =
  | { kind: 'free' }
  | { kind: 'evict'; key: string }
  /** Every slot is busy; `stopping` when a slot is already being freed (no need to tell the user). */
  | { kind: 'wait'; stopping: boolean };

/**
 * Decides for `key` (which has no process). `stopping` counts processes being stopped right now: their
 * slots free themselves shortly.
 */
export function planSlot(views: readonly SlotView[], max: number, key: string, stopping: number): SlotPlan {
  const live = views.filter((view) => view.live && view.key !== key).length;
  if (live + stopping < max) return { kind: 'free' };
  if (stopping > 0) return { kind: 'wait', stopping: true };
  let victim: SlotView | undefined;
  for (const view of views) {
    if (view.key === key || !view.live || !view.evictable) continue;
    if (!victim || view.lastActiveAt < victim.lastActiveAt) victim = view;
  }
  return victim ? { kind: 'evict', key: victim.key } : { kind: 'wait', stopping: false };
}

/** The live, evictable processes idle for longer than `idleMs` at `now`: stopped to free memory. */
export function idleExpired(views: readonly SlotView[], idleMs: number, now: number): string[] {
  return views
    .filter((view) => view.live && view.evictable && now - view.lastActiveAt > idleMs)
    .map((view) => view.key);
}

/** What the pool's next wake-up depends on (see {@link nextWake}). */
export interface WakeInputs {
  views: readonly SlotView[];
  /** `idleStopMs`: a live, evictable process idle longer than this is stopped. */
  idleMs: number;
  /** When each failed conversation may be tried again (`Failure.retryAt`). */
  retries: readonly number[];
  /**
   * How often a live process's liveness is read: a process that dies says nothing on stdout, so its
   * exit (and the stuck watchdog's silence) is found only by asking.
   */
  livePollMs: number;
}

/**
 * When the pool must next look, at `now` — what no event announces: a live process polled for its
 * liveness, an idle process's expiry, a failed conversation's retry. `undefined` when nothing is due
 * ever (no process, no failure): the pool then sleeps until an event (a frame, a process freed).
 * Never before `now`.
 */
export function nextWake(input: WakeInputs, now: number): number | undefined {
  let at: number | undefined;
  const consider = (time: number): void => {
    if (at === undefined || time < at) at = time;
  };
  for (const view of input.views) {
    if (!view.live) continue;
    consider(now + input.livePollMs);
    // `idleExpired` stops a process idle for more than `idleMs`: due one millisecond after.
    if (view.evictable) consider(view.lastActiveAt + input.idleMs + 1);
  }
  for (const retryAt of input.retries) consider(retryAt);
  return at === undefined ? undefined : Math.max(at, now);
}
