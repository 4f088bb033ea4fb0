/**
 * The budget where a message's spending starts: the gate asked before the turn machine takes it, which
 * admits it, refuses it or holds it until a running turn ends. It asks the ledger (`spend-ledger.ts`),
 * which holds the rule's inputs. (A voice note's transcription is metered at intake:
 * `io/voice/voice-intake.ts`.)
 */
import type { FrameOf, Route } from '@switchyard/protocol';
import type { SpendCheck, SpendLedger } from './spend-ledger.js';

/** The gate's handle. */
export interface BudgetGate {
  /**
   * Today's budget's verdict on a message about to start a turn, asked before the turn machine takes it
   * (`Turns.arrive` gets the verdict, and its own step marks a refused message unread): a refusal's
   * notice is told here when one is due. A held message stays in the inbox and is kept here; when a
   * running turn ends the held ones are weighed again in the order they came, each admitted one passed
   * to `deps.pass` and each refused one marked unread (`deps.turns.refused`: the machine took it before).
   */
  weigh(frame: FrameOf<'user_message'>): SpendCheck;
  /**
   * A message the machine did not take through `arrive` (the boot's re-send of one left queued): weighed
   * as {@link BudgetGate.weigh} does, then passed to the bridge, held, or marked unread (the machine
   * adopts it from the store).
   */
  offer(frame: FrameOf<'user_message'>): void;
}

/** Creates the gate over the ledger (see {@link BudgetGate}). */
export function budgetGate(
  spend: Pick<SpendLedger, 'check' | 'onRelease'>,
  deps: {
    turns: { refused(inboundIds: readonly string[], reason: string): void };
    reply(route: Route, text: string): void;
    refused(scope: 'agent' | 'user'): void;
    /** Hands an admitted message to the bridge. */
    pass(frame: FrameOf<'user_message'>): void;
  },
): BudgetGate {
  /** Held messages by inbound id, in the order they came (a resend of one keeps its place). */
  const held = new Map<string, FrameOf<'user_message'>>();
  const weigh = (frame: FrameOf<'user_message'>): SpendCheck => {
    held.delete(frame.inboundId);
    const check = spend.check(frame);
    if (check.admit === 'hold') held.set(frame.inboundId, frame);
    else if (check.admit === false) {
      deps.refused(check.scope);
      if (check.notice) deps.reply(frame.route, check.notice);
    }
    return check;
  };
  const offer = (frame: FrameOf<'user_message'>): void => {
    const check = weigh(frame);
    if (check.admit === true) deps.pass(frame);
    else if (check.admit === false) deps.turns.refused([frame.inboundId], check.reason);
  };
  let releasing = false;
  spend.onRelease(() => {
    // A check may itself let a stale reservation go: the loop already running weighs every held one.
    if (releasing) return;
    releasing = true;
    try {
      for (const frame of [...held.values()]) offer(frame);
    } finally {
      releasing = false;
    }
  });
  return { weigh, offer };
}
