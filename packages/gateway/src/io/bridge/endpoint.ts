/**
 * The bridge's endpoint as the composition step (`compose.ts`) builds it: the protocol server on the
 * gateway's socket, its connection changes logged, and a user message the bridge refused reported in
 * its chat instead of silently gone.
 */
import { createProtocolServer, type Endpoint, type Logger } from '@switchyard/protocol';
import type { GatewayOptions } from '../../options.js';
import type { GatewayStore } from '../../store/store.js';
import type { Turns } from '../turns/turns.js';

/** The bridge's endpoint (the protocol server on the gateway's socket); starts nothing until `start`. */
export function createEndpoint(
  options: GatewayOptions,
  store: GatewayStore,
  wiring: {
    onFrame: Parameters<typeof createProtocolServer>[0]['onFrame'];
    onConnectionChange(connected: boolean): void;
    turns: Pick<Turns, 'frame'>;
    logger: Logger;
  },
): Endpoint {
  const { logger } = wiring;
  return createProtocolServer({
    socketPath: options.socketPath,
    ...(options.socketMode !== undefined ? { socketMode: options.socketMode } : {}),
    ...(options.socketDirectoryMode !== undefined ? { directoryMode: options.socketDirectoryMode } : {}),
    agent: options.agent,
    store: store.channel,
    onFrame: wiring.onFrame,
    onConnectionChange: (state) => {
      wiring.onConnectionChange(state.connected);
      logger.info(
        { event: 'bridge_connection', connected: state.connected },
        state.connected ? 'bridge connected' : 'bridge disconnected',
      );
    },
    logger: logger.child({ component: 'protocol' }),
    onRefused: (r) => {
      logger.warn(
        { event: 'frame_skipped', direction: r.direction, seq: r.seq, type: r.frameType, code: r.code },
        'the channel skipped a frame its receiver refused',
      );
      // A user's message the bridge refused is not silently gone: its placeholder says so.
      if (r.direction === 'sent' && r.frame?.type === 'user_message') {
        wiring.turns.frame({
          type: 'messages_unread',
          inboundIds: [r.frame.inboundId],
          reason: `the agent could not take it: ${r.message.slice(0, 300)}`,
        });
      }
    },
  });
}
