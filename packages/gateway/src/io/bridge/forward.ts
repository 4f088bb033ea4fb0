/**
 * How a user's message reaches the bridge, the one way for a Telegram message and for a run nobody typed
 * (`io/automation/inject.ts`): today's budget is asked first (`io/spend/spend-ledger.ts`; a refusal is
 * told by the gate itself), then the frame goes to the bridge's channel. A frame the channel will not
 * take (it fails the protocol's checks) is reported in its chat instead of silently gone.
 */
import type { FrameOf, Logger, Route } from '@switchyard/protocol';
import { reportNotForwarded } from '../../core/intake/message-fit.js';
import type { GatewayStore } from '../../store/store.js';
import type { Turns } from '../turns/turns.js';

/** What handing a frame to the bridge needs. */
export interface PassOptions {
  /** Hands a message to the bridge's channel (its files carried first to a remote bridge: `file-carrier.ts`). */
  send(frame: FrameOf<'user_message'>): Promise<void>;
  store: Pick<GatewayStore, 'getInbound'>;
  turns: Pick<Turns, 'refused'>;
  reply(route: Route, text: string): Promise<unknown>;
  logger: Logger;
}

/** What forwarding needs: the hand-over, and today's budget in front of it. */
export interface ForwardOptions {
  /**
   * Today's budget: false when it refused the message (and said so), or holds it until a running turn
   * ends (and then hands it to `pass` itself).
   */
  withinBudget(frame: FrameOf<'user_message'>): boolean;
  /** The hand-over, {@link createPass}. */
  pass(frame: FrameOf<'user_message'>): void;
}

/**
 * Hands a message the budget admitted to the bridge's channel, reporting one it will not take; it never
 * throws and never rejects.
 */
export function createPass(options: PassOptions): (frame: FrameOf<'user_message'>) => void {
  const { logger } = options;
  return (frame) =>
    void options.send(frame).catch((error: unknown) => {
      logger.error({ event: 'forward_refused', error: String(error) }, 'message not queued');
      reportNotForwarded(frame, error, {
        turns: options.turns,
        hasPlaceholder: (id) => options.store.getInbound(id)?.placeholderId !== undefined,
        reply: (route, text) => void options.reply(route, text),
      });
    });
}

/** Creates the forward: the budget, then the hand-over; it never throws and never rejects. */
export function createForward(options: ForwardOptions): (frame: FrameOf<'user_message'>) => void {
  return (frame) => {
    if (options.withinBudget(frame)) options.pass(frame);
  };
}
