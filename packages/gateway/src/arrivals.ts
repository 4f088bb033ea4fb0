/**
 * The shell that acknowledges each inbound message in its chat, as `core/arrival.ts` decides: a
 * "Thinking…" draft, or a placeholder message ("…", a steer marker, "queued"), after a silent wait for a
 * connecting bridge within the start-up grace.
 *
 * Ownership: the acknowledgement in flight per message (so a turn that opens with the message waits for
 * its placeholder instead of sending its own), the turn each in-flight placeholder opened (named in the
 * transaction that ends its send), and which messages went without a placeholder message. Every entry
 * leaves when its message settles: the acknowledgement's send ends, or its message is taken into a turn
 * or reported unread (`settle`), so the state holds only messages in flight.
 */
import type { Logger, Route } from '@switchyard/protocol';
import { errorText } from './bot-api.js';
import { arrival, BRIDGE_GRACE_MS, type MarkerKind } from './core/arrival.js';
import { threadParams } from './core/route.js';
import type { Courier } from './courier.js';
import { PLACEHOLDER } from './markers.js';
import type { Replies } from './replies.js';
import type { SendJournal } from './send-journal.js';
import type { GatewayStore, InboundRow } from './store.js';

/** What the acknowledgements need. */
export interface ArrivalsOptions {
  courier: Courier;
  journal: Pick<SendJournal, 'send'>;
  store: Pick<GatewayStore, 'getInbound' | 'getTurn' | 'setPlaceholder' | 'setTurnMessages'>;
  replies: Pick<Replies, 'mode' | 'thinking'>;
  logger: Logger;
  /** The bridge's connection: whether it is up, and a wait for it (resolves early when it connects). */
  bridge: { connected(): boolean; whenConnected(timeoutMs: number): Promise<void> };
  /** The start-up grace; default {@link BRIDGE_GRACE_MS}. */
  graceMs?: number;
  /** Whether a turn of the route's conversation is running. */
  laneBusy(route: Route): boolean;
}

/** The acknowledgements' handle. */
export interface Arrivals {
  /** Acknowledges a durable inbound message (no-op if it has been); resolves when that is done. */
  placeholder(row: InboundRow): Promise<void>;
  /** Resolves once the message's acknowledgement (if one is in flight) has ended. */
  settled(inboundId: string): Promise<unknown> | undefined;
  /** Whether the message, opening a turn, got no placeholder message (its reply is a draft). */
  drafted(inboundId: string): boolean;
  /** Whether the message's "Thinking…" draft went out (its turn need not send one). */
  thought(inboundId: string): boolean;
  /**
   * The message opens turn `turnId` while its placeholder may be in flight: the placeholder's send, when
   * it ends, names itself as that turn's first message. Resolves with its id; undefined when none is in
   * flight.
   */
  opens(inboundId: string, turnId: string): Promise<number | undefined> | undefined;
  /** The messages were taken into a turn or reported unread: forget them. */
  settle(inboundIds: readonly string[]): void;
}

/** Creates the acknowledgements' shell. */
export function createArrivals(options: ArrivalsOptions): Arrivals {
  const { courier, journal, store, replies, logger } = options;
  const inFlight = new Map<string, Promise<number | undefined>>();
  /** Inbound id → the turn it opened, while that turn waits for the inbound's placeholder to be sent. */
  const opening = new Map<string, string>();
  const unplaced = new Set<string>();
  const thought = new Set<string>();

  /**
   * Acknowledges one inbound message as `core/arrival.ts` decides (waiting for a connecting bridge
   * first, within the grace); resolves with its placeholder message's id, if it got one.
   */
  const acknowledge = async (row: InboundRow): Promise<number | undefined> => {
    const arrivedAt = Date.now();
    for (;;) {
      const decision = arrival({
        bridgeConnected: options.bridge.connected(),
        waitedMs: Date.now() - arrivedAt,
        graceMs: options.graceMs ?? BRIDGE_GRACE_MS,
        laneBusy: options.laneBusy(row.route),
        openedTurn: opening.has(row.inboundId) || store.getInbound(row.inboundId)?.state === 'taken',
        drafts: replies.mode(row.route) === 'draft',
      });
      if (decision.kind === 'wait') {
        await options.bridge.whenConnected(decision.ms);
        continue;
      }
      if (decision.kind === 'draft') {
        // No placeholder message: "Thinking…" as a draft at once, under the id the turn's drafts will
        // use, so the preview carries on; with the chat's draft bucket empty (or the turn already
        // started) the turn shows it instead.
        unplaced.add(row.inboundId);
        if (decision.thinking && replies.thinking(row.route, row.telegramMessageId))
          thought.add(row.inboundId);
        return undefined;
      }
      return sendPlaceholder(row, decision.marker);
    }
  };

  const sendPlaceholder = (row: InboundRow, kind: MarkerKind): Promise<number | undefined> => {
    const chatId = row.route.chatId;
    return courier
      .call(
        chatId,
        () =>
          journal.send(
            chatId,
            PLACEHOLDER[kind],
            {
              ...threadParams(row.route),
              reply_parameters: { message_id: row.telegramMessageId, allow_sending_without_reply: true },
            },
            {
              owner: { kind: 'placeholder', inboundId: row.inboundId, placeholderKind: kind },
              adopt: (id) => {
                store.setPlaceholder(row.inboundId, id, kind);
                // Taken into a turn while in flight: the turn's list names it in the same transaction,
                // so a crash right after cannot resume that turn without its placeholder.
                const turnId = opening.get(row.inboundId);
                opening.delete(row.inboundId);
                const turn = turnId === undefined ? undefined : store.getTurn(turnId);
                if (turn && turn.state !== 'rendered' && turn.messageIds.length === 0)
                  store.setTurnMessages(turn.turnId, [id]);
              },
            },
          ),
        { priority: 'urgent' },
      )
      .then((sent) => sent?.message_id)
      .catch((error: unknown) => {
        logger.warn({ event: 'placeholder_failed', chat: chatId, error: errorText(error) });
        return undefined;
      });
  };

  return {
    async placeholder(row) {
      if (row.placeholderId !== undefined || inFlight.has(row.inboundId)) return;
      // In the map from the start (a wait for the bridge included), so a turn that opens with this
      // message meanwhile waits for its placeholder instead of sending its own.
      const pending = acknowledge(row).finally(() => {
        // Settled: its id (if any) is in the store now, which is what later edits read.
        inFlight.delete(row.inboundId);
        opening.delete(row.inboundId);
      });
      inFlight.set(row.inboundId, pending);
      await pending;
    },

    settled: (inboundId) => inFlight.get(inboundId),
    drafted: (inboundId) =>
      unplaced.has(inboundId) ||
      (!inFlight.has(inboundId) && store.getInbound(inboundId)?.placeholderId === undefined),
    thought: (inboundId) => thought.has(inboundId),
    opens(inboundId, turnId) {
      const pending = inFlight.get(inboundId);
      if (pending) opening.set(inboundId, turnId);
      return pending;
    },
    settle(inboundIds) {
      for (const id of inboundIds) {
        unplaced.delete(id);
        thought.delete(id);
      }
    },
  };
}
