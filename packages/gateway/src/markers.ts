/**
 * The markers of inbound messages: the placeholder message each one got ("…", "⏳ will be read at the
 * agent's next step", "agent restarting — your message is queued", "⏳ waiting for a free session") and
 * the text it must end with ("✓ taken into the current turn", "✓ read together with the message
 * above", "✗ Not read …", or the answer, when the turn's reply takes the placeholder over).
 *
 * Invariant: a marker's due text is recorded in the store (`placeholderDue`) before the edit is tried and
 * forgotten only once Telegram confirms it, so an edit lost to a crash, a Telegram outage or a
 * placeholder still in flight is made by the next sweep (at start and every `retryMs`) instead of leaving
 * "⏳ will be read" or "queued" beside an answered message. At most one edit per marker is on its way.
 */
import type { Logger } from '@switchyard/protocol';
import { type BotApi, errorText } from './bot-api.js';
import type { Courier } from './courier.js';
import type { GatewayStore } from './store.js';

/** Placeholder texts; the user reads these. */
export const PLACEHOLDER = {
  reply: '…',
  steer: '⏳ will be read at the agent’s next step',
  queued: 'agent restarting — your message is queued',
  waiting: '⏳ waiting for a free session — every Claude process of this agent is busy; you are next in line',
  taken: '✓ taken into the current turn',
  merged: '✓ read together with the message above',
} as const;

/** What the markers need. */
export interface MarkersOptions {
  api: Pick<BotApi, 'editMessageText'>;
  courier: Courier;
  store: Pick<GatewayStore, 'getInbound' | 'placeholderDue' | 'placeholderShown' | 'duePlaceholders'>;
  logger: Logger;
  /** Resolves once the message's placeholder send (if one is in flight) has ended. */
  settled(inboundId: string): Promise<unknown> | undefined;
  /** How often markers Telegram did not confirm are tried again; default 15 s. */
  retryMs?: number;
}

/** The markers' handle. */
export interface Markers {
  /**
   * The marker of `inboundId` is to say `text` (kind `kind`). Kind `reply` hands the placeholder to its
   * turn's reply, which writes it from then on: that edit is tried once and not kept due.
   */
  set(inboundId: string, text: string, kind: string): void;
  /** Sweeps the markers still due, now and every `retryMs`. */
  start(): void;
  stop(): void;
}

/** Creates the markers' shell. */
export function createMarkers(options: MarkersOptions): Markers {
  const { api, courier, store, logger } = options;
  /** Placeholders whose edit is on its way, so the retry sweep does not queue a second one. */
  const editing = new Set<string>();

  /**
   * Edits the placeholder to `text` once, after its send if that is still in flight. `shown`: Telegram
   * has it; `gone`: it says that already, or can never be edited again; `replaced`: a newer edit of the
   * same message took this one's place in the chat's queue.
   */
  const edit = async (
    inboundId: string,
    text: string,
    retried: boolean,
  ): Promise<'shown' | 'gone' | 'replaced' | 'failed' | 'no message'> => {
    await options.settled(inboundId);
    const row = store.getInbound(inboundId);
    const id = row?.placeholderId;
    if (!row || id === undefined) return 'no message';
    const chatId = row.route.chatId;
    try {
      const done = await courier.call(chatId, () => api.editMessageText(chatId, id, text), {
        key: `ph:${id}`,
      });
      return done === undefined ? 'replaced' : 'shown';
    } catch (error) {
      const words = errorText(error);
      const gone = /not modified|not found|can't be edited/i.test(words);
      logger.warn({ event: 'placeholder_edit_failed', error: words, retry: retried && !gone });
      return gone ? 'gone' : 'failed';
    }
  };

  const applyDue = (inboundId: string): void => {
    if (editing.has(inboundId)) return;
    editing.add(inboundId);
    void (async () => {
      await options.settled(inboundId);
      const due = store.getInbound(inboundId)?.placeholderDue;
      if (due === undefined) return;
      const outcome = await edit(inboundId, due, true);
      if (outcome === 'shown' || outcome === 'gone') store.placeholderShown(inboundId, due);
    })().finally(() => editing.delete(inboundId));
  };

  /** The placeholder is to say `text`; `reply` hands it to the turn's reply, which writes it from then on. */
  const editPlaceholder = (inboundId: string, text: string, kind: string): void => {
    if (kind === 'reply') {
      store.placeholderDue(inboundId, kind, undefined);
      void edit(inboundId, text, false);
      return;
    }
    store.placeholderDue(inboundId, kind, text);
    applyDue(inboundId);
  };

  /** Edits every placeholder still due its text; at start and then every `placeholderRetryMs`. */
  const sweepDue = (): void => {
    for (const row of store.duePlaceholders()) applyDue(row.inboundId);
  };

  let sweeper: NodeJS.Timeout | undefined;
  return {
    set: editPlaceholder,
    start() {
      sweepDue();
      sweeper ??= setInterval(sweepDue, options.retryMs ?? 15_000);
      sweeper.unref();
    },
    stop() {
      clearInterval(sweeper);
    },
  };
}
