/**
 * Counters and a bounded log of Bot API requests, so tests and the benchmark can assert on what a bot
 * asked for (requests per method, 429s sent, edit rate per chat) without wrapping its HTTP client.
 */

/** One finished Bot API request. */
export interface ApiCallRecord {
  /** Method name as Telegram spells it (`sendMessage`), or as sent when unknown. */
  method: string;
  /** The `chat_id` parameter when there was a numeric one. */
  chatId?: number;
  ok: boolean;
  /** Set when `ok` is false: 400, 401, 404, 409 or 429. */
  errorCode?: number;
  description?: string;
  /** When the request arrived, in the server clock's milliseconds. */
  at: number;
  /** Time from arrival to response (includes long-poll waiting for `getUpdates`). */
  durationMs: number;
}

/** A snapshot of the counters. */
export interface ApiStats {
  /** Requests per method, whatever their outcome. */
  requests: Record<string, number>;
  /** Failed requests per method. */
  failures: Record<string, number>;
  /** 429 responses sent, in total. */
  tooManyRequests: number;
  /** 409 responses sent to `getUpdates`. */
  conflicts: number;
}

/** Keeps the counters and the last {@link ApiCallLog.capacity} calls. */
export class ApiCallLog {
  readonly capacity: number;
  readonly #calls: ApiCallRecord[] = [];
  #stats: ApiStats = { requests: {}, failures: {}, tooManyRequests: 0, conflicts: 0 };

  constructor(capacity = 20_000) {
    this.capacity = capacity;
  }

  /**
   * Counts a request as it arrives, before it has any effect, so a test that sees the effect also sees
   * the count.
   */
  arrived(method: string): void {
    this.#stats.requests[method] = (this.#stats.requests[method] ?? 0) + 1;
  }

  /** Counts a finished call's outcome and keeps it in the log. */
  record(call: ApiCallRecord): void {
    const s = this.#stats;
    if (!call.ok) s.failures[call.method] = (s.failures[call.method] ?? 0) + 1;
    if (call.errorCode === 429) s.tooManyRequests++;
    if (call.errorCode === 409) s.conflicts++;
    this.#calls.push(call);
    if (this.#calls.length > this.capacity) this.#calls.splice(0, this.#calls.length - this.capacity);
  }

  /** A copy of the counters. */
  stats(): ApiStats {
    return structuredClone(this.#stats);
  }

  /** The logged calls, oldest first, optionally only those of one method. */
  calls(method?: string): ApiCallRecord[] {
    const all = method === undefined ? this.#calls : this.#calls.filter((c) => c.method === method);
    return all.map((c) => ({ ...c }));
  }

  /** Clears counters and log (between phases of a test). */
  reset(): void {
    this.#calls.length = 0;
    this.#stats = { requests: {}, failures: {}, tooManyRequests: 0, conflicts: 0 };
  }
}
