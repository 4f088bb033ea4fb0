/**
 * The users' presses of inline buttons (callback queries) and the bot's answers to them, by query id.
 * Held by the chat store (`chat-store.ts`), which owns the sandbox's state; emits `callback_query` and
 * `callback_answer`.
 */
import type { EventHub } from './events.js';
import type { CallbackAnswer, CallbackQueryRecord } from './records.js';

/** The callback queries of one sandbox. */
export class CallbackQueries {
  readonly #hub: EventHub;
  readonly #now: () => number;
  readonly #queries = new Map<string, CallbackQueryRecord>();
  #nextQuery = 1;

  constructor(hub: EventHub, now: () => number) {
    this.#hub = hub;
    this.#now = now;
  }

  /** Records a button press and returns it (the id is new). Emits `callback_query`. */
  add(query: Omit<CallbackQueryRecord, 'id' | 'at' | 'answer'>): CallbackQueryRecord {
    const id = `${Date.now().toString(36)}${(this.#nextQuery++).toString(36)}`;
    const record: CallbackQueryRecord = { ...query, id, at: this.#now() };
    this.#queries.set(id, record);
    this.#hub.emit({ type: 'callback_query', query: structuredClone(record) });
    return structuredClone(record);
  }

  /** A callback query by id. */
  get(id: string): CallbackQueryRecord | undefined {
    const query = this.#queries.get(id);
    return query && structuredClone(query);
  }

  /** Stores the bot's answer. Emits `callback_answer`. */
  answer(id: string, answer: Omit<CallbackAnswer, 'at'>): void {
    const query = this.#queries.get(id);
    if (!query) return;
    query.answer = { ...answer, at: this.#now() };
    this.#hub.emit({ type: 'callback_answer', query: structuredClone(query) });
  }
}
