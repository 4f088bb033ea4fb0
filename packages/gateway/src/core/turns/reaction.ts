/**
 * What a stored inbound message's state looks like in its chat: a reaction the bot sets on it, from the
 * emoji bots may set (`ReactionTypeEmoji` in the Bot API), or — in a chat that refuses them — one line
 * of ONE marker message per run of messages, edited in place.
 *
 * The states, and who decides them (`turn-machine.ts`):
 * - `waiting` 👀: stored, not read yet: a turn of its conversation runs, the agent is restarting, or
 *   every session is busy.
 * - `reading` ✍: it opened the turn that is running, or was taken into it at a step.
 * - `read` 👌: read together with the message that opened its turn, or its turn has answered.
 * A message the agent will never read gets words instead ("✗ Not read …", `marker-text.ts`): a
 * reaction cannot say why.
 *
 * The fallback marker (`markerStep`), for chats whose `available_reactions` or settings refuse the bot's
 * reactions (`REACTION_INVALID`): a marker covers the messages from the first one that had to wait (or
 * until all it covers are read; a later message that must wait opens the next one. A message read at
 * once needs none: the typing action and its answer say it all. So a burst costs one
 * message and its edits, never one message per message.
 */

/** A message's state, as shown. */
export type ReactionState = 'waiting' | 'reading' | 'read';

/** The emoji of each state; all three are in the Bot API's list of reactions bots may set. */
export const REACTION_EMOJI = {
  waiting: '👀',
  reading: '✍',
  read: '👌',
} as const satisfies Record<ReactionState, string>;

/** One run of messages the fallback marker covers, in arrival order. */
export interface LaneMarker {
  readonly covers: readonly { readonly messageId: number; readonly state: ReactionState }[];
}

/**
 * The marker after `messageId` reached `state`. `opened`: the step started a new marker (the old one,
 * if any, is done: all read); `undefined` marker: nothing to show (a lone message read at once).
 */
export function markerStep(
  marker: LaneMarker | undefined,
  messageId: number,
  state: ReactionState,
): { marker: LaneMarker | undefined; opened: boolean } {
  const covered = marker?.covers.some((c) => c.messageId === messageId) ?? false;
  if (marker && covered) {
    const covers = marker.covers.map((c) => (c.messageId === messageId ? { messageId, state } : c));
    return { marker: { covers }, opened: false };
  }
  if (marker && !allRead(marker)) {
    return { marker: { covers: [...marker.covers, { messageId, state }] }, opened: false };
  }
  // No open marker: only a message that must wait opens one; one read at once needs none.
  if (state !== 'waiting') return { marker, opened: false };
  return { marker: { covers: [{ messageId, state }] }, opened: true };
}

/** Whether every message the marker covers is read (it will not change again). */
export function allRead(marker: LaneMarker): boolean {
  return marker.covers.every((c) => c.state === 'read');
}

/** The marker's text: how many of the messages it covers are in each state, in the states' order. */
export function markerText(marker: LaneMarker): string {
  const count = (state: ReactionState) => marker.covers.filter((c) => c.state === state).length;
  if (allRead(marker)) return `${REACTION_EMOJI.read} read: ${plural(marker.covers.length)}`;
  const parts: string[] = [];
  if (count('waiting') > 0) parts.push(`${REACTION_EMOJI.waiting} waiting: ${plural(count('waiting'))}`);
  if (count('reading') > 0) parts.push(`${REACTION_EMOJI.reading} being read: ${plural(count('reading'))}`);
  if (count('read') > 0) parts.push(`${REACTION_EMOJI.read} read: ${plural(count('read'))}`);
  return parts.join(' · ');
}

function plural(n: number): string {
  return n === 1 ? '1 message' : `${n} messages`;
}
