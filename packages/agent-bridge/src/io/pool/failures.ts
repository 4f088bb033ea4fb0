/**
 * The pool's book of failing conversations: the shell of `core/process/policy.ts`'s {@link failureStep}.
 * It stamps each event with the clock's time, keeps the core's state (and where each failure is
 * reported), and performs the actions: `report` sends the chat a `conversation_failed` event (the first
 * failure of a run only), `retry` hands the conversation to the pool to open again, whose outcome comes
 * back as {@link FailureBook.opened} or {@link FailureBook.failed}. The pool arms its one timer for
 * {@link FailureBook.wakeAt} among its other wake-ups.
 */
import type { Clock, Endpoint, Route } from '@switchyard/protocol';
import {
  blockedAt,
  type Failure,
  type FailureEvent,
  type Failures,
  failureStep,
} from '../../core/process/policy.js';

/** What the book needs of the pool. */
export interface FailureBookOptions {
  clock: Clock;
  endpoint: Pick<Endpoint, 'send'>;
  /** Open `key` again (in the pool's chain); report the outcome with `opened` or `failed`. */
  retry(key: string, route: Route | undefined): void;
}

/** The failing conversations, as the pool asks about them and reports to them. */
export interface FailureBook {
  /** `key` failed now: its backoff grows; its chat (`route`) is told the first time. Returns the failure. */
  failed(key: string, route: Route | undefined, reason: string): Failure;
  /** `key` was opened or served: it works again. */
  opened(key: string): void;
  /** The pool's tick: retries those past their backoff that nothing in `busy` opens anyway. */
  tick(busy: ReadonlySet<string>): void;
  /** The conversations still backing off: their frames wait. */
  blocked(): ReadonlySet<string>;
  /** Why `key` is failing, while it is. */
  reason(key: string): string | undefined;
  /** When the next retry is due, if any. */
  readonly wakeAt: number | undefined;
}

/** An empty book. */
export function createFailureBook(options: FailureBookOptions): FailureBook {
  const { clock, endpoint } = options;
  let failures: Failures = new Map();
  let wakeAt: number | undefined;
  /** Where each failing conversation's failure is reported (its route when it failed). */
  const routes = new Map<string, Route | undefined>();

  const run = (event: FailureEvent): void => {
    const step = failureStep(failures, event);
    failures = step.failures;
    wakeAt = step.wakeAt;
    for (const action of step.actions) {
      const route = routes.get(action.key);
      if (action.kind === 'retry') {
        options.retry(action.key, route);
      } else if (route) {
        endpoint
          .send({
            type: 'operator_event',
            kind: 'conversation_failed',
            route,
            message:
              `This conversation could not be opened (${action.reason.slice(0, 1000)}). Its messages are kept and it ` +
              'is tried again every few seconds; other chats are not affected. See the bridge’s log for the cause.',
          })
          .catch(() => {});
      }
    }
  };

  return {
    failed(key, route, reason) {
      routes.set(key, route ?? routes.get(key));
      run({ kind: 'failed', key, reason, at: clock.now() });
      return failures.get(key) as Failure;
    },
    opened(key) {
      run({ kind: 'opened', key });
      if (!failures.has(key)) routes.delete(key);
    },
    tick(busy) {
      run({ kind: 'tick', at: clock.now(), busy });
    },
    blocked: () => blockedAt(failures, clock.now()),
    reason: (key) => failures.get(key)?.reason,
    get wakeAt() {
      return wakeAt;
    },
  };
}
