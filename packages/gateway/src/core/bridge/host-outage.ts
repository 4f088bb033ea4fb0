/**
 * A bridge on another host that cannot be reached (issue 29): the chats with a message waiting are told
 * once per outage, after a grace, that the agent's host is unreachable and their messages are kept. A
 * short drop of the link (a restart of either side, ssh reconnecting) says nothing: only an outage longer
 * than the grace is news. The reaction 👀 on each waiting message says the rest.
 *
 * State: when the outage began, the conversations with a message waiting, the ones told. Inputs: the
 * connection, a message, the time. Output: the conversations to tell now, and when to look again.
 * Pure: `now` comes in; the shell (`io/bridge/host-notice.ts`) sends and arms the timer.
 */

/** One outage as the rule sees it. `downSince` is undefined while the bridge is connected. */
export interface HostOutage {
  readonly downSince: number | undefined;
  /** Conversations (route keys) with a message that came during the outage, not told yet. */
  readonly waiting: readonly string[];
  /** Conversations told during this outage: never told twice. */
  readonly told: readonly string[];
}

/** The state of a gateway that has just started: no bridge yet, so an outage from `now`. */
export function startOutage(now: number): HostOutage {
  return { downSince: now, waiting: [], told: [] };
}

/** The bridge connected (the outage is over, and forgotten) or went away (an outage begins, if none). */
export function connectionChanged(state: HostOutage, connected: boolean, now: number): HostOutage {
  if (connected) return { downSince: undefined, waiting: [], told: [] };
  return state.downSince === undefined ? { downSince: now, waiting: [], told: [] } : state;
}

/** A message for conversation `key` came in: it waits for the host, if there is an outage. */
export function messageCame(state: HostOutage, key: string): HostOutage {
  if (state.downSince === undefined || state.told.includes(key) || state.waiting.includes(key)) return state;
  return { ...state, waiting: [...state.waiting, key] };
}

/**
 * The conversations to tell at `now` (the outage has lasted `graceMs`), the state after telling them,
 * and when to look again (the grace's end, while some wait untold; undefined when nothing is due).
 */
export function dueNotices(
  state: HostOutage,
  now: number,
  graceMs: number,
): { tell: string[]; state: HostOutage; wakeAt: number | undefined } {
  if (state.downSince === undefined || state.waiting.length === 0)
    return { tell: [], state, wakeAt: undefined };
  const end = state.downSince + graceMs;
  if (now < end) return { tell: [], state, wakeAt: end };
  return {
    tell: [...state.waiting],
    state: { ...state, waiting: [], told: [...state.told, ...state.waiting] },
    wakeAt: undefined,
  };
}

/** What the chat reads; `host` is where the bridge runs (`user@host`). */
export function hostUnreachableText(host: string): string {
  return `⏳ The agent’s host (${host}) can’t be reached right now. Your messages are kept, and the agent answers them once the host is back.`;
}
