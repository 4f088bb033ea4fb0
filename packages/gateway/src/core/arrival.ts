/**
 * How an inbound message is acknowledged in its chat, decided once, when it comes in: a "Thinking…"
 * draft (a private chat with rich replies: no placeholder message at all), or a placeholder message
 * saying `reply` ("…", the answer grows from it), `steer` (read at the agent's next step) or `queued`
 * (the agent is restarting).
 *
 * Start-up grace: while the bridge is connecting (after a start or a restart of either service) the
 * message waits silently for up to {@link BRIDGE_GRACE_MS}; only a longer wait earns the "agent
 * restarting" notice. A message that waited gets the path it would have had with the bridge up, so the
 * first message after a start is answered as a draft and one rich message like every other one.
 */

/** How long a message waits for a connecting bridge before its chat is told the agent is restarting. */
export const BRIDGE_GRACE_MS = 3000;

/** A placeholder message's kind (see `PLACEHOLDER` in `core/marker-text.ts` for the texts). */
export type MarkerKind = 'reply' | 'steer' | 'queued';

/** What the decision reads. */
export interface ArrivalView {
  /** Whether the bridge is connected now. */
  bridgeConnected: boolean;
  /** How long the message has waited for the bridge so far (0 on arrival). */
  waitedMs: number;
  /** The start-up grace; {@link BRIDGE_GRACE_MS} unless configured. */
  graceMs: number;
  /** A turn of the message's conversation is running (as far as the gateway has heard). */
  laneBusy: boolean;
  /** The bridge already opened a turn with this message (it arrived while the message waited). */
  openedTurn: boolean;
  /** Replies in this conversation are drafts (a private chat with rich replies). */
  drafts: boolean;
}

/** The decision: wait a little longer, a draft, or a placeholder message of one kind. */
export type Arrival =
  | { kind: 'wait'; ms: number }
  | { kind: 'draft'; thinking: boolean }
  | { kind: 'marker'; marker: MarkerKind };

/** Decides how a message is acknowledged; see the module comment. */
export function arrival(view: ArrivalView): Arrival {
  // Its own turn exists already: it is that turn's opening message, whatever else holds.
  if (view.openedTurn)
    return view.drafts ? { kind: 'draft', thinking: false } : { kind: 'marker', marker: 'reply' };
  if (!view.bridgeConnected) {
    const left = view.graceMs - view.waitedMs;
    return left > 0 ? { kind: 'wait', ms: left } : { kind: 'marker', marker: 'queued' };
  }
  if (view.laneBusy) return { kind: 'marker', marker: 'steer' };
  return view.drafts ? { kind: 'draft', thinking: true } : { kind: 'marker', marker: 'reply' };
}
