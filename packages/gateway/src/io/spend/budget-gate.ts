/**
 * The budgets where spending starts: the gate in front of the bridge's hand-over, which refuses a
 * message or holds it until a running turn ends, and the transcriber that books what a voice note's
 * transcription cost. Both ask the ledger (`spend-ledger.ts`), which holds the rule's inputs.
 */
import type { FrameOf, Route } from '@switchyard/protocol';
import type { Transcriber } from '../voice/voice-types.js';
import type { SpendLedger } from './spend-ledger.js';

/**
 * The gate where a message is handed to the bridge: whether the budgets let `frame` start a turn. When
 * not, the turn machine marks it not read (its marker says why, and it leaves the inbox, so it is never
 * re-sent) and its sender gets the day's notice when one is due. A message held while the running turns
 * may use the budget up stays in the inbox; when one of them ends, the held messages are weighed again
 * in the order they came, and each admitted one is passed to `deps.pass` (a refused one marked).
 */
export function budgetGate(
  spend: Pick<SpendLedger, 'check' | 'onRelease'>,
  deps: {
    turns: { refused(inboundIds: readonly string[], reason: string): void };
    reply(route: Route, text: string): void;
    refused(scope: 'agent' | 'user'): void;
    /** Hands a held message, admitted now, to the bridge. */
    pass(frame: FrameOf<'user_message'>): void;
  },
): (frame: FrameOf<'user_message'>) => boolean {
  /** Held messages by inbound id, in the order they came (a resend of one keeps its place). */
  const held = new Map<string, FrameOf<'user_message'>>();
  const gate = (frame: FrameOf<'user_message'>): boolean => {
    const check = spend.check(frame);
    if (check.admit === true) return true;
    if (check.admit === 'hold') {
      held.set(frame.inboundId, frame);
      return false;
    }
    deps.refused(check.scope);
    // Every caller hands the turn machine the message before the frame (the handler, the injector), or
    // the machine adopts it from the store (the boot's re-send): it is marked at once.
    deps.turns.refused([frame.inboundId], check.reason);
    if (check.notice) deps.reply(frame.route, check.notice);
    return false;
  };
  let releasing = false;
  spend.onRelease(() => {
    // A check may itself let a stale reservation go: the loop already running weighs every held one.
    if (releasing) return;
    releasing = true;
    try {
      for (const [id, frame] of [...held]) {
        held.delete(id);
        if (gate(frame)) deps.pass(frame);
      }
    } finally {
      releasing = false;
    }
  });
  return (frame) => {
    held.delete(frame.inboundId);
    return gate(frame);
  };
}

/**
 * The transcriber a voice note of `who` is heard with under the budgets: none while they may not spend
 * (the note goes on as a file, and the gate weighs the message as any other), else `transcriber` with
 * each transcription that produced text booked at its length.
 */
export function meteredTranscriber(
  transcriber: Transcriber,
  spend: Pick<SpendLedger, 'allows' | 'chargeTranscription'>,
  who: { id: string; route: Route; userId: number | undefined },
): Transcriber {
  if (spend.allows(who.route, who.userId).admit !== true)
    return { transcribe: async () => ({ kind: 'unconfigured' }) };
  return {
    async transcribe(file, signal) {
      const heard = await transcriber.transcribe(file, signal);
      if (heard.kind === 'text')
        spend.chargeTranscription(who.id, who.route, who.userId, file.durationSeconds);
      return heard;
    },
  };
}
