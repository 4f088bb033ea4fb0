/**
 * How an inbound message is acknowledged in its chat, decided once, when it comes in. Never with a
 * message of its own (Telegram's message slots are for answers): a "Thinking…" draft (a private chat
 * with rich replies), and a reaction on the message for its state (`reaction.ts`): 👀 at once
 * when it must wait (a turn runs, the agent is restarting), or none until its turn starts (✍) when it
 * will be read at once. The answer's first message is sent when its first text is ready.
 *
 * Start-up grace: while the bridge is connecting (after a start or a restart of either service) the
 * message waits silently for up to {@link BRIDGE_GRACE_MS}; only a longer wait earns the "agent
 * restarting" notice. A message that waited gets the path it would have had with the bridge up, so the
 * first message after a start is answered as a draft and one rich message like every other one.
 */

/** How long a message waits for a connecting bridge before its chat is told the agent is restarting. */
export const BRIDGE_GRACE_MS = 3000;

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

/**
 * The decision: wait a little longer, a draft, or a reaction (`waiting`: 👀 now; `false`: nothing until
 * its turn starts and says ✍).
 */
export type Arrival =
  | { kind: 'wait'; ms: number }
  | { kind: 'draft'; thinking: boolean }
  | { kind: 'react'; waiting: boolean };

/** Decides how a message is acknowledged; see the module comment. */
export function arrival(view: ArrivalView): Arrival {
  // Its own turn exists already: it is that turn's opening message, whatever else holds.
  if (view.openedTurn)
    return view.drafts ? { kind: 'draft', thinking: false } : { kind: 'react', waiting: false };
  if (!view.bridgeConnected) {
    const left = view.graceMs - view.waitedMs;
    return left > 0 ? { kind: 'wait', ms: left } : { kind: 'react', waiting: true };
  }
  if (view.laneBusy) return { kind: 'react', waiting: true };
  return view.drafts ? { kind: 'draft', thinking: true } : { kind: 'react', waiting: false };
}
