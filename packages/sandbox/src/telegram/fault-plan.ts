/**
 * Faults the Telegram sandbox injects on request, for fault tests: an error answer instead of the call
 * (once or `times`), every call of a method failing for a while (a 5xx outage, a 429 storm), a call
 * carried out and its answer lost (the connection dropped after Telegram acted), a connection dropped
 * before the call, and `getUpdates` stalled (the poll neither answers nor delivers).
 *
 * Pure bookkeeping over an injected clock: the server asks {@link FaultPlan.take} what to do with each
 * call and {@link FaultPlan.stalledFor} how long a poll must wait; it performs the fault itself.
 */

/** A forced error answer (see `TelegramServer.failNext`). */
export interface InjectedFailure {
  /** Default 400. */
  errorCode?: number;
  /** The full description, e.g. "Bad Request: message to pin not found". */
  description: string;
  /** For 429s. */
  retryAfter?: number;
}

/** What the server does to one call instead of (or after) answering it normally. */
export type Fault =
  /** Answer with this error; the call is not carried out. */
  | { kind: 'fail'; failure: InjectedFailure }
  /**
   * Close the connection without an answer. With `afterCall` the call is carried out first (the
   * message exists on "Telegram's" side, the client cannot know): the outcome-unknown case.
   */
  | { kind: 'drop'; afterCall: boolean };

/** Which calls a fault applies to. */
export interface FaultScope {
  /** A Bot API method (case-insensitive), or `*` for every method. */
  method: string;
  /** Only calls with this `chat_id`. */
  chatId?: number;
}

interface Counted extends FaultScope {
  fault: Fault;
  remaining: number;
}

interface Timed extends FaultScope {
  fault: Fault;
  until: number;
}

const applies = (scope: FaultScope, method: string, chatId: number | undefined): boolean =>
  (scope.method === '*' || scope.method.toLowerCase() === method.toLowerCase()) &&
  (scope.chatId === undefined || scope.chatId === chatId);

/** The faults planned so far; consumed as calls arrive. */
export class FaultPlan {
  readonly #now: () => number;
  readonly #counted: Counted[] = [];
  readonly #timed: Timed[] = [];
  #stalledUntil = 0;
  /** Faults carried out so far: error answers and dropped connections per call, stalls per `stall`. */
  readonly injected = { fail: 0, drop: 0, stall: 0 };

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The next `times` matching calls get `fault` (in the order faults were added). */
  next(scope: FaultScope, fault: Fault, times = 1): void {
    if (times > 0) this.#counted.push({ ...scope, fault, remaining: times });
  }

  /** Every matching call during the next `durationMs` gets `fault`. */
  during(scope: FaultScope, fault: Fault, durationMs: number): void {
    this.#timed.push({ ...scope, fault, until: this.#now() + durationMs });
  }

  /** `getUpdates` answers nothing (and delivers nothing) for the next `durationMs`. */
  stall(durationMs: number): void {
    this.#stalledUntil = Math.max(this.#stalledUntil, this.#now() + durationMs);
    this.injected.stall++;
  }

  /** Milliseconds a `getUpdates` arriving now must wait before it is served; 0 when not stalled. */
  stalledFor(): number {
    return Math.max(this.#stalledUntil - this.#now(), 0);
  }

  /** The fault for this call, consumed (a counted one before a timed one); undefined for none. */
  take(method: string, chatId: number | undefined): Fault | undefined {
    const at = this.#now();
    for (let i = this.#timed.length - 1; i >= 0; i--)
      if ((this.#timed[i]?.until ?? 0) <= at) this.#timed.splice(i, 1);
    const index = this.#counted.findIndex((f) => applies(f, method, chatId));
    const counted = this.#counted[index];
    let fault: Fault | undefined;
    if (counted) {
      if (--counted.remaining <= 0) this.#counted.splice(index, 1);
      fault = counted.fault;
    } else fault = this.#timed.find((f) => applies(f, method, chatId))?.fault;
    if (fault) this.injected[fault.kind]++;
    return fault;
  }

  /** Forgets every planned fault (those in effect end now). */
  clear(): void {
    this.#counted.length = 0;
    this.#timed.length = 0;
    this.#stalledUntil = 0;
  }
}
