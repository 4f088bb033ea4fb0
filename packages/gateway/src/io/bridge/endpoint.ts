/**
 * The bridge's endpoint: the protocol server on the gateway's socket, with its connection changes
 * logged and recorded for the operator's commands (`../ops/peer-record.ts`), and a user message the
 * bridge refused reported in its chat instead of silently gone.
 *
 * Built first and received from last: the services that send to the bridge (the prompts, the commands,
 * the files, the automation) take {@link BridgeLink.send} and {@link BridgeLink.connected} when they are
 * built, while the frames the bridge sends are owned by those same services. So the composition builds
 * the link before them and hands it its receiver, once, after them ({@link BridgeLink.receive}), as
 * grammY's `bot.use` takes the handlers of a bot that exists. Nothing arrives before that: the server
 * listens only from `start`, in the boot.
 */
import {
  type AppFrame,
  type Clock,
  createProtocolServer,
  type Endpoint,
  type Logger,
} from '@switchyard/protocol';
import type { GatewayOptions } from '../../options.js';
import type { GatewayStore } from '../../store/store.js';
import { createPeerRecorder } from '../ops/peer-record.js';
import type { Turns } from '../turns/turns.js';

/** Who takes what the bridge sends. */
export interface BridgeReceiver {
  onFrame: Parameters<typeof createProtocolServer>[0]['onFrame'];
  /**
   * Sees every frame as it arrives, before `onFrame` and beside it: an observer (the metrics) the frame
   * does not pass through on its way to its owner.
   */
  observe?(frame: AppFrame): void;
  /** Told after {@link BridgeLink.connected} has changed. */
  onConnectionChange(connected: boolean): void;
  /** Marks a message the bridge refused as not read. */
  turns: Pick<Turns, 'refused'>;
}

/** The link's handle. */
export interface BridgeLink {
  /** The protocol server, for the boot to start and the lifecycle to stop. */
  endpoint: Endpoint;
  /** Hands a frame to the channel (see the protocol's `Endpoint.send`). */
  send: Endpoint['send'];
  /** Whether a bridge is connected, as last reported by the server. */
  connected(): boolean;
  /** Hands the link its receiver; once, before `start`. */
  receive(receiver: BridgeReceiver): void;
}

/** Creates the link; starts nothing until `endpoint.start`. */
export function createBridgeLink(
  options: GatewayOptions,
  store: GatewayStore,
  deps: { clock: Clock; logger: Logger },
): BridgeLink {
  const { logger } = deps;
  const state: { connected: boolean; receiver?: BridgeReceiver } = { connected: false };
  // What the operator's commands read of the bridge's connection (status, doctor): see peer-record.ts.
  const peer = createPeerRecorder({ stateDir: options.stateDir, clock: deps.clock, logger });
  const receiver = (): BridgeReceiver => {
    if (!state.receiver)
      throw new Error('the bridge link has no receiver: compose hands it one before the boot');
    return state.receiver;
  };
  const endpoint = createProtocolServer({
    socketPath: options.socketPath,
    ...(options.socketMode !== undefined ? { socketMode: options.socketMode } : {}),
    ...(options.socketDirectoryMode !== undefined ? { directoryMode: options.socketDirectoryMode } : {}),
    agent: options.agent,
    ...(options.release !== undefined ? { release: options.release } : {}),
    store: store.channel,
    clock: deps.clock,
    onFrame: (frame, receipt) => {
      const to = receiver();
      to.observe?.(frame);
      return to.onFrame(frame, receipt);
    },
    onConnectionChange: (change) => {
      state.connected = change.connected;
      peer.connection(change);
      receiver().onConnectionChange(change.connected);
      logger.info(
        { event: 'bridge_connection', connected: change.connected },
        change.connected ? 'bridge connected' : 'bridge disconnected',
      );
    },
    onRoundTrip: (ms) => peer.roundTrip(ms),
    onHandshakeRefused: (refusal) => peer.refused(refusal),
    logger: logger.child({ component: 'protocol' }),
    onRefused: (r) => {
      logger.warn(
        { event: 'frame_skipped', direction: r.direction, seq: r.seq, type: r.frameType, code: r.code },
        'the channel skipped a frame its receiver refused',
      );
      // A user's message the bridge refused is not silently gone: its placeholder says so.
      if (r.direction === 'sent' && r.frame?.type === 'user_message') {
        receiver().turns.refused(
          [r.frame.inboundId],
          `the agent could not take it: ${r.message.slice(0, 300)}`,
        );
      }
    },
  });
  return {
    endpoint,
    send: (frame, origin) => endpoint.send(frame, origin),
    connected: () => state.connected,
    receive(next) {
      if (state.receiver)
        throw new Error('the bridge link has a receiver already: compose hands it one, once');
      state.receiver = next;
    },
  };
}
