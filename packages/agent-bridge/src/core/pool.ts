/**
 * The rule for the agent's Claude process slots (`maxLiveSessions`), as a pure function: a conversation
 * that needs a process gets a free slot, or the least recently used idle process is stopped to make one,
 * or it waits. Each live process costs ~170 MB, so the cap is what bounds an agent's memory.
 */

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
