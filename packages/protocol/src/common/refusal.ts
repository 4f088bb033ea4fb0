/**
 * The pure half of refusing input: when a numbered frame may be taken (its sequence verdict), how a
 * failing handler is retried, and the words a refusal carries. `connection.ts` applies them.
 *
 * A refusal is the channel's way past a frame it cannot take: the receiver answers a `refused` frame for
 * its `seq`, both sides report it through `onRefused`, and the frame counts as handled.
 */
import type { Clock } from './clock.js';
import { describeError, type Logger } from './logger.js';
import { type AppFrame, type FrameType, RELIABLE_TYPES, type RefusalCode } from './messages/frame.js';
import type { Receipt } from './store.js';

/**
 * A reliable frame that its receiver could not take: it refused it (`received`) or the peer refused one
 * of ours (`sent`). Either way the channel has moved past `seq`; the application tells a person.
 */
export interface Refusal {
  direction: 'received' | 'sent';
  seq: number;
  /** The frame's type when known (a `sent` refusal of a frame no longer held has none). */
  frameType: string | undefined;
  code: RefusalCode;
  /** What was wrong, in words that say what to do; names no user text. */
  message: string;
  /** The frame itself: ours when still held (`sent`), the peer's when it was valid (`received`). */
  frame: AppFrame | undefined;
}

/** What waits in a connection's inbound queue: a valid frame, or the type and seq of an invalid numbered one. */
export type Inbound =
  | { frame: AppFrame; type: FrameType; seq: number | undefined; invalid?: undefined }
  | { frame?: undefined; type: string; seq: number; invalid: string };

/** Three attempts in all: at once, after 100 ms, after a further second. */
export const DEFAULT_HANDLER_RETRY_DELAYS_MS: readonly number[] = [100, 1_000];
/** Refusal texts carry at most this much of a handler's error. */
const MAX_DETAIL_CHARS = 300;

/**
 * What to do with numbered frame `seq` given the cursor: `next` (take it), `duplicate` (drop it, ack
 * again), `resync` (take it, moving the cursor: allowed only for the first new frame after a handshake,
 * see `connection.ts`), or `gap` (refuse the connection).
 */
export function sequenceVerdict(
  seq: number,
  lastSeen: number,
  resyncAllowed: boolean,
): 'next' | 'duplicate' | 'resync' | 'gap' {
  if (seq <= lastSeen) return 'duplicate';
  if (seq === lastSeen + 1) return 'next';
  return resyncAllowed ? 'resync' : 'gap';
}

/** The type and `seq` of a value that claims to be a numbered frame, so that an invalid one can be refused. */
export function numberedFrame(value: unknown): { type: string; seq: number } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { type, seq } = value as { type?: unknown; seq?: unknown };
  if (typeof type !== 'string' || !RELIABLE_TYPES.has(type as FrameType)) return undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  return { type, seq };
}

/** How a handler failed, after how many attempts. */
export interface HandlerFailure {
  attempts: number;
  detail: string;
}

/**
 * Runs `onFrame`, retrying after each of `delays` while it throws. Resolves `undefined` once it returned,
 * or the last failure; stops early once `closed()` is true (the frame is then offered again after the
 * next handshake, with fresh attempts).
 */
export async function runHandler(
  onFrame: (frame: AppFrame, receipt?: Receipt) => void | Promise<void>,
  frame: AppFrame,
  receipt: Receipt | undefined,
  delays: readonly number[],
  host: { log: Logger; closed(): boolean; clock: Clock },
): Promise<HandlerFailure | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      await onFrame(frame, receipt);
      return undefined;
    } catch (err) {
      const detail = describeError(err).slice(0, MAX_DETAIL_CHARS);
      host.log.error(
        {
          event: 'handler_failed',
          type: frame.type,
          seq: receipt?.cursor.lastSeen,
          attempt: attempt + 1,
          err: detail,
        },
        'frame handler failed',
      );
      const delay = delays[attempt];
      if (delay === undefined || host.closed()) return { attempts: attempt + 1, detail };
      await host.clock.sleep(delay);
      if (host.closed()) return { attempts: attempt + 1, detail };
    }
  }
}

/** The refusal text for a frame that failed validation on `side` (gateway or bridge). */
export function invalidText(side: string, problem: string): string {
  return `${problem}; the ${side} skipped it: run the same Switchyard release for the gateway and the bridge`;
}

/** The refusal text for a frame whose handler on `side` kept failing. */
export function handlerFailedText(side: string, type: string, seq: number, failure: HandlerFailure): string {
  return (
    `the ${side} could not handle ${type} (seq ${seq}) after ${failure.attempts} attempts ` +
    `(${failure.detail}); it was skipped: see the ${side}'s log for the cause`
  );
}
