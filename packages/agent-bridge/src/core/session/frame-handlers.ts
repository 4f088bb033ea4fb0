/**
 * The gateway's frames handled by table, not by switch: a layer that takes some of the frame types
 * declares one handler per type ({@link FrameHandlers}), and the compiler refuses a table that misses
 * one. Two tables, one per layer a frame crosses: the bridge's (`bridge.ts`) says where each frame goes
 * (the pool, the prompt's owner, a conversation, the terminal commands, the bridge itself), a
 * conversation's (`io/session/commands.ts`) what it does there. Pure: types and one lookup.
 */
import type { FrameOf, GatewayToBridge, Receipt } from '@switchyard/protocol/common';

/** A frame type the gateway sends. */
export type GatewayFrameType = GatewayToBridge['type'];

/** One handler for each frame type in `T`, called with the frame and, when numbered, its receipt. */
export type FrameHandlers<T extends GatewayFrameType, R = Promise<void>> = {
  readonly [K in T]: (frame: FrameOf<K>, receipt?: Receipt) => R;
};

/** Calls the handler `handlers` holds for `frame`'s type. */
export function handleFrame<T extends GatewayFrameType, R>(
  handlers: FrameHandlers<T, R>,
  frame: FrameOf<T>,
  receipt?: Receipt,
): R {
  const handler = handlers[(frame as GatewayToBridge).type as T] as (
    frame: FrameOf<T>,
    receipt?: Receipt,
  ) => R;
  return handler(frame, receipt);
}
