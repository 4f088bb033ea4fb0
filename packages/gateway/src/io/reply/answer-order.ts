/**
 * Answers in turn order: per conversation, a chain of the turns' replies, each link settled when its
 * reply is rendered or given up. A reply queues no Bot API call before the link before it has settled,
 * so a turn's final message (rich or classic, however many calls its render takes) appears before any
 * later turn's answer in the same conversation, whatever else the chat's courier lane holds.
 *
 * Bounded in time: a link waits at most `maxWaitMs` for the one before it. The reply before renders in a
 * few calls, so the bound is reached only by a render that hangs (a call that never returns, a path
 * that ends a turn without settling): then the later answer goes out of order, which is logged, rather
 * than never — one stuck render must not silence its conversation for good. Bounded in memory: a
 * conversation's entry leaves once its newest link has settled.
 */
import type { Clock } from '@switchyard/protocol';

/** How long a reply waits for the one before it (a render takes seconds, a 429's retry included). */
export const ANSWER_ORDER_MAX_WAIT_MS = 120_000;

/** One reply's place in its conversation's chain. */
export interface AnswerLink {
  /**
   * Resolves when the previous reply of the conversation has settled, or `maxWaitMs` after the link was
   * made if it has not; undefined when there is no previous reply waiting.
   */
  readonly after: Promise<void> | undefined;
  /** This reply has settled: the next one may go. Idempotent. */
  settle(): void;
}

/** The chains, one per conversation (by lane key). */
export interface AnswerOrder {
  /** Appends a reply to the chain of `lane` (its conversation's lane key). */
  link(lane: string): AnswerLink;
}

/** What the chains need: the clock for the bound, and who hears of a reply that stopped waiting. */
export interface AnswerOrderOptions {
  readonly clock: Clock;
  /** Default {@link ANSWER_ORDER_MAX_WAIT_MS}. */
  readonly maxWaitMs?: number;
  /** A reply stopped waiting for the one before it after `waitedMs` (the bound was reached). */
  readonly onOvertake?: (lane: string, waitedMs: number) => void;
}

/** Creates the chains; one per gateway. */
export function createAnswerOrder(options: AnswerOrderOptions): AnswerOrder {
  const { clock, onOvertake } = options;
  const maxWaitMs = options.maxWaitMs ?? ANSWER_ORDER_MAX_WAIT_MS;
  const newest = new Map<string, Promise<void>>();
  return {
    link(lane) {
      const before = newest.get(lane);
      let resolve!: () => void;
      const mine = new Promise<void>((r) => {
        resolve = r;
      });
      newest.set(lane, mine);
      const after =
        before &&
        new Promise<void>((go) => {
          const timer = clock.setTimeout(() => {
            onOvertake?.(lane, maxWaitMs);
            go();
          }, maxWaitMs);
          void before.then(() => {
            clock.clearTimeout(timer);
            go();
          });
        });
      return {
        after,
        settle() {
          resolve();
          if (newest.get(lane) === mine) newest.delete(lane);
        },
      };
    },
  };
}
