/**
 * The sending side of one file transfer, as a pure machine: events stamped with the caller's time in,
 * actions and a wake-up time out (the shape of `card/src/cadence.ts`). The shell (`node/transfer.ts`)
 * reads the chunks, writes the frames, arms one timer and reports what it hears back.
 *
 * Invariants:
 * - Every offer is answered by the receiver with where to resume (`transfer_ack`) or its verdict
 *   (`transfer_done`), so an offer is the whole restart protocol: after a dropped link, a restarted peer
 *   or a silence of `stallMs`, the sender offers again and goes on from what the receiver says it holds.
 *   Nothing sent before that counts: chunks in flight are sent again from `acked`.
 * - At most `windowChunks` chunks are in flight (sent, not acknowledged): a transfer never has more than
 *   that much of the link, and whatever else the side sends is written between its chunks.
 * - A verdict ends the transfer once (`finish` is emitted once); later frames for it change nothing.
 *   A checksum the receiver could not match is offered again from nothing, at most `maxAttempts` times.
 */
import { TRANSFER_CHUNK_BYTES } from '../messages/transfer.js';

/** The pace of a transfer. */
export interface TransferLimits {
  /** File bytes per chunk (at most {@link TRANSFER_CHUNK_BYTES}). */
  chunkBytes: number;
  /** Chunks in flight at most. */
  windowChunks: number;
  /** No word from the receiver this long while connected: offer again. */
  stallMs: number;
  /** Offers from nothing after a checksum mismatch, at most. */
  maxAttempts: number;
}

/** The defaults: 48 KiB chunks, four in flight (~256 KiB on the wire), 15 s of silence, three tries. */
export const DEFAULT_TRANSFER_LIMITS: TransferLimits = {
  chunkBytes: TRANSFER_CHUNK_BYTES,
  windowChunks: 4,
  stallMs: 15_000,
  maxAttempts: 3,
};

/** Where one outgoing transfer is. */
export interface SendState {
  readonly size: number;
  /** `offer`: waiting for the receiver's answer to an offer (or for the link); `send`: chunks flow. */
  readonly phase: 'offer' | 'send' | 'done';
  /** Bytes the receiver said it holds. */
  readonly acked: number;
  /** The next byte to send. */
  readonly next: number;
  readonly connected: boolean;
  /** When the receiver was last heard (or the last offer made). */
  readonly heardAt: number;
  /** Offers from nothing so far (the first included). */
  readonly attempts: number;
}

/** What the sender hears or is told. */
export type SendEvent =
  | { kind: 'ack'; received: number }
  | { kind: 'done'; ok: true; path: string }
  | { kind: 'done'; ok: false; error: string; retry: boolean }
  | { kind: 'link'; up: boolean }
  | { kind: 'tick' };

/** What the shell is to do, in order. */
export type SendAction =
  | { kind: 'offer' }
  | { kind: 'chunk'; offset: number; length: number }
  | { kind: 'finish'; ok: true; path: string }
  | { kind: 'finish'; ok: false; error: string };

/** A step's outcome: the new state, the actions, and when to tick next (absent: no timer). */
export interface SendStep {
  state: SendState;
  actions: SendAction[];
  wakeAt?: number;
}

/** A transfer of `size` bytes begins: it offers at once when connected, else when the link is up. */
export function startSend(
  size: number,
  connected: boolean,
  now: number,
  limits: TransferLimits = DEFAULT_TRANSFER_LIMITS,
): SendStep {
  const state: SendState = { size, phase: 'offer', acked: 0, next: 0, connected, heardAt: now, attempts: 1 };
  return withWake({ state, actions: connected ? [{ kind: 'offer' }] : [] }, limits);
}

/** One event: see the module comment. */
export function stepSend(
  state: SendState,
  event: SendEvent,
  now: number,
  limits: TransferLimits = DEFAULT_TRANSFER_LIMITS,
): SendStep {
  if (state.phase === 'done') return { state, actions: [] };
  switch (event.kind) {
    case 'link':
      if (!event.up)
        return { state: { ...state, connected: false, phase: 'offer', next: state.acked }, actions: [] };
      return withWake(reoffer({ ...state, connected: true }, now), limits);
    case 'tick':
      if (!state.connected || now - state.heardAt < limits.stallMs)
        return withWake({ state, actions: [] }, limits);
      return withWake(reoffer(state, now), limits);
    case 'ack': {
      const received = Math.min(Math.max(event.received, 0), state.size);
      // Less than before: the receiver lost what it had (a new offer after it dropped bad bytes, or its
      // disk was reset); resume from there.
      const next =
        state.phase === 'offer' || received < state.acked ? received : Math.max(state.next, received);
      return withWake(fill({ ...state, phase: 'send', acked: received, next, heardAt: now }, limits), limits);
    }
    case 'done': {
      if (event.ok)
        return {
          state: { ...state, phase: 'done' },
          actions: [{ kind: 'finish', ok: true, path: event.path }],
        };
      if (event.retry && state.attempts < limits.maxAttempts) {
        const fresh = { ...state, acked: 0, next: 0, attempts: state.attempts + 1 };
        return withWake(reoffer(fresh, now), limits);
      }
      return {
        state: { ...state, phase: 'done' },
        actions: [{ kind: 'finish', ok: false, error: event.error }],
      };
    }
  }
}

/** Offers again (when connected): chunks in flight are forgotten, the receiver's answer says where to go on. */
function reoffer(state: SendState, now: number): SendStep {
  const next: SendState = { ...state, phase: 'offer', next: state.acked, heardAt: now };
  return { state: next, actions: state.connected ? [{ kind: 'offer' }] : [] };
}

/** Chunks up to the window. */
function fill(state: SendState, limits: TransferLimits): SendStep {
  const actions: SendAction[] = [];
  let next = state.next;
  const window = limits.windowChunks * limits.chunkBytes;
  while (state.connected && next < state.size && next - state.acked < window) {
    const length = Math.min(limits.chunkBytes, state.size - next);
    actions.push({ kind: 'chunk', offset: next, length });
    next += length;
  }
  return { state: { ...state, next }, actions };
}

/** The step with its wake-up: a stall check while connected and not done. */
function withWake(step: SendStep, limits: TransferLimits): SendStep {
  const { state } = step;
  if (state.phase === 'done' || !state.connected) return step;
  return { ...step, wakeAt: state.heardAt + limits.stallMs };
}
