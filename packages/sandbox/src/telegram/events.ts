/**
 * Everything that changes what a user (or a test) would see, as one tagged union. The server emits these
 * in order as they happen; the web chat view streams them, and tests wait on them. Payloads are
 * snapshots: a listener may keep them, and mutating one changes nothing in the server.
 */

import type {
  CallbackQueryRecord,
  ChatActionRecord,
  DraftRecord,
  DraftStopRecord,
  SandboxChat,
  SandboxMessage,
} from './records.js';
import type { ApiCallRecord } from './stats.js';
import type { WireBotCommand } from './wire.js';

/** One change in the sandbox. Switch on `type`. */
export type SandboxEvent =
  /** A chat was created, or its settings or topics changed. */
  | { type: 'chat'; chat: SandboxChat }
  /** A message appeared (from the user, the bot, or a service message such as a pin notice). */
  | { type: 'message'; message: SandboxMessage }
  /** A message's text, caption or keyboard changed; `message.history` holds every version. */
  | { type: 'edit'; message: SandboxMessage }
  /** A message was deleted; it stays in the store with `deleted: true`. */
  | { type: 'delete'; message: SandboxMessage }
  /** The bot set its reactions on a message. */
  | { type: 'reaction'; message: SandboxMessage }
  /** The chat's pinned messages changed; `pinned` is oldest first, the last one is shown in the bar. */
  | { type: 'pins'; chatId: number; pinned: number[] }
  /** The bot sent a chat action ("typing…"). */
  | { type: 'action'; action: ChatActionRecord }
  /** The bot streamed a draft (`sendMessageDraft`, `sendRichMessageDraft`). */
  | { type: 'draft'; draft: DraftRecord }
  /** The user pressed a draft's stop button; the bot receives `stopped_message_generation`. */
  | { type: 'draft_stop'; stop: DraftStopRecord }
  /** A user pressed an inline button; `query.answer` is set by a later `callback_answer` event. */
  | { type: 'callback_query'; query: CallbackQueryRecord }
  /** The bot answered a callback query. */
  | { type: 'callback_answer'; query: CallbackQueryRecord }
  /** The bot's command list changed. */
  | { type: 'commands'; scope: string; commands: WireBotCommand[] }
  /** `getUpdates` handed these updates to the bot. */
  | { type: 'updates_delivered'; updateIds: number[]; at: number }
  /** A Bot API request finished (any method, any outcome). */
  | { type: 'api_call'; call: ApiCallRecord };

/** The `type` tags of {@link SandboxEvent}. */
export type SandboxEventType = SandboxEvent['type'];

/** A function that receives every event; it must not throw (a throwing listener is ignored). */
export type SandboxListener = (event: SandboxEvent) => void;

/** A minimal synchronous fan-out of sandbox events to listeners. */
export class EventHub {
  readonly #listeners = new Set<SandboxListener>();

  /** Registers a listener; the returned function removes it. */
  subscribe(listener: SandboxListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Delivers one event to every listener, in subscription order. */
  emit(event: SandboxEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A broken listener must not break the Bot API response it was notified from.
      }
    }
  }

  /**
   * Resolves with the first truthy value of `check`, evaluated now and after every event; rejects after
   * `timeoutMs` (naming the last value seen) or when `signal` aborts. Leaves no timer or listener behind.
   */
  until<T>(check: () => T | undefined | null | false, timeoutMs: number, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let last: unknown;
      const evaluate = (): boolean => {
        try {
          const value = check();
          last = value;
          if (value !== undefined && value !== null && value !== false) {
            finish();
            resolve(value);
            return true;
          }
        } catch (err) {
          finish();
          reject(err);
          return true;
        }
        return false;
      };
      const onAbort = (): void => {
        finish();
        reject(signal?.reason ?? new Error('waitFor aborted'));
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(`sandbox waitFor timed out after ${timeoutMs} ms (last check returned ${String(last)})`),
        );
      }, timeoutMs);
      const unsubscribe = this.subscribe((_event: SandboxEvent) => {
        evaluate();
      });
      function finish(): void {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
      }
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      evaluate();
    });
  }

  /** Removes every listener (on stop). */
  clear(): void {
    this.#listeners.clear();
  }
}
