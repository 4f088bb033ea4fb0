/**
 * What an inbound message's marker says: the placeholder message it got ("…", a steer, "queued",
 * "waiting") and the final texts it reaches once the model read it (or never will). The user reads
 * these; `turn-machine.ts` decides which one is due when.
 */

/** Placeholder texts; the user reads these. */
export const PLACEHOLDER = {
  reply: '…',
  steer: '⏳ will be read at the agent’s next step',
  queued: 'agent restarting — your message is queued',
  waiting: '⏳ waiting for a free session — every Claude process of this agent is busy; you are next in line',
  taken: '✓ taken into the current turn',
  merged: '✓ read together with the message above',
} as const;

/** The marker of a message waiting for a free session behind `position` other conversations. */
export function waitingText(position: number): string {
  return position === 0
    ? PLACEHOLDER.waiting
    : `⏳ waiting for a free session (${position} conversation(s) ahead)`;
}

/** The marker of a message the agent will never read, saying why. */
export function unreadText(reason: string): string {
  return `✗ Not read by the agent (${reason}). Send it again if it still matters.`;
}
