/**
 * How a user's message reaches the bridge, the one way for a Telegram message, for a run nobody typed
 * (`io/automation/inject.ts`) and for a held message let in: handed to the bridge's channel once today's
 * budget admitted it (`io/spend/spend-ledger.ts`, asked before the turn machine took the message, so
 * nothing here reports a budget back). A frame the channel will not take (it fails the protocol's checks)
 * is reported in its chat instead of silently gone.
 */
import type { FrameOf, Logger, Route } from '@switchyard/protocol';
import { reportNotForwarded } from '../../core/intake/message-fit.js';
import type { GatewayStore } from '../../store/store.js';
import type { Turns } from '../turns/turns.js';

/** What handing a frame to the bridge needs. */
export interface ForwardOptions {
  /** Hands a message to the bridge's channel (its files carried first to a remote bridge: `file-carrier.ts`). */
  send(frame: FrameOf<'user_message'>): Promise<void>;
  store: Pick<GatewayStore, 'getInbound'>;
  turns: Pick<Turns, 'refused'>;
  reply(route: Route, text: string): Promise<unknown>;
  logger: Logger;
}

/**
 * Creates the hand-over of a message today's budget admitted to the bridge's channel, reporting one the
 * channel will not take (a later outcome: the turn machine took the message before); it never throws and
 * never rejects.
 */
export function createForward(options: ForwardOptions): (frame: FrameOf<'user_message'>) => void {
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
