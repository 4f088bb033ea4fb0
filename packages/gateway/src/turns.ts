/**
 * Turns as the user sees them: the reply stream each turn grows into (from its opening message's
 * placeholder, or as a draft), the typing indicator, steers marked as taken, unread messages reported,
 * and the final render when the turn ends. How each inbound message is acknowledged is `arrivals.ts`;
 * the markers' texts and their durable edits are `markers.ts`.
 *
 * Replies are rich (`replies: rich`, the default) or classic (both: `core/reply.ts`). Rich in a
 * private chat means no "…" placeholder: a "Thinking…" draft appears at once and the answer is one
 * `sendRichMessage`; rich in a group means the placeholder is edited into a rich message. Placeholders
 * that say something else (queued, steer, waiting) stay messages in both. When the Bot API server lacks
 * the rich methods the tracker notices once and uses the classic path from then on.
 *
 * Contract with the channel: `frame` does its durable bookkeeping (SQLite) synchronously and starts the
 * Telegram work without awaiting it, so the bridge's frames are acknowledged once they are safe here and
 * a slow chat never holds up the socket. After a restart, `resume` picks up turns that were running or
 * ended but not yet rendered from SQLite.
 */
import type { BridgeToGateway, Clock, FrameOf, Logger, Route } from '@switchyard/protocol';
import { createArrivals } from './arrivals.js';
import { type BotApi, errorText } from './bot-api.js';
import type { CardDriver } from './card-driver.js';
import { finalText } from './core/final-text.js';
import { laneKey, threadParams } from './core/route.js';
import type { Courier } from './courier.js';
import { createMarkers, PLACEHOLDER } from './markers.js';
import { createReplies, type ReplyStream, type RichReply } from './replies.js';
import { ReplyText } from './reply-text.js';
import type { SendJournal } from './send-journal.js';
import type { GatewayStore, InboundRow, TurnRow } from './store.js';

/** What the turn tracker needs. */
export interface TurnsOptions {
  api: Pick<
    BotApi,
    | 'sendMessage'
    | 'editMessageText'
    | 'deleteMessage'
    | 'sendChatAction'
    | 'sendMessageDraft'
    | 'sendRichMessageDraft'
  >;
  /** Sends placeholders and reply messages as their owners' (see `send-journal.ts`). */
  journal: Pick<SendJournal, 'send' | 'sendRich'>;
  /** Rich messages and drafts (default), or today's placeholder edits and HTML render. */
  replies?: 'rich' | 'classic';
  courier: Courier;
  store: GatewayStore;
  cards: CardDriver;
  logger: Logger;
  /** The bridge's connection: whether it is up, and a wait for it (resolves early when it connects). */
  bridge: { connected(): boolean; whenConnected(timeoutMs: number): Promise<void> };
  /** How long a message waits silently for a connecting bridge; default `BRIDGE_GRACE_MS` (3 s). */
  bridgeGraceMs?: number;
  /** How often the typing action is renewed; default 4500 ms (Telegram shows it for 5 s). */
  typingEveryMs?: number;
  /** How often placeholder edits that failed are tried again; default 15 s. */
  placeholderRetryMs?: number;
  /** Time for the replies (`replies.ts`); default the system clock. */
  clock?: Clock;
}

/** A turn in progress, as the gateway holds it in memory. */
interface LiveTurn {
  turnId: string;
  route: Route;
  /** The reply so far, built incrementally (see `reply-text.ts`). */
  reply: ReplyText;
  stream: Promise<ReplyStream | RichReply>;
  typing: NodeJS.Timeout | undefined;
}

/** The turn tracker's handle. */
export interface Turns {
  /** Sends the placeholder for a durable inbound message (no-op if it has one). */
  placeholder(row: InboundRow): Promise<void>;
  /** Applies a turn-related frame from the bridge. */
  frame(frame: BridgeToGateway): void;
  /** The turn running in a route, if any. */
  running(route: Route): string | undefined;
  /** All running turns, for `/status`. */
  live(): { turnId: string; route: Route }[];
  /**
   * The user pressed the stop button of a draft in `route` (`stopped_message_generation`): that turn's
   * reply sends no more drafts. The caller interrupts the turn as `/stop` does.
   */
  draftStopped(route: Route): void;
  /** Re-attaches turns left running or unrendered by a previous process, and the cards they left open. */
  resume(): void;
  /** Stops typing timers and waits for final renders in flight. */
  stop(): Promise<void>;
}

/** Creates the turn tracker. */
export function createTurns(options: TurnsOptions): Turns {
  const { api, journal, courier, store, cards, logger } = options;
  const typingEvery = options.typingEveryMs ?? 4500;
  const live = new Map<string, LiveTurn>();
  const byLane = new Map<string, string>();
  const finishing = new Set<Promise<void>>();
  /**
   * Turns whose final render is in flight. A second `finish` for the same turn (a `turn_ended` resent
   * after a restart while `resume` renders it) would build a second stream over the same messages and
   * send the continuation chunks twice; it is ignored instead.
   */
  const rendering = new Set<string>();
  const replies = createReplies({
    api,
    journal,
    courier,
    store,
    replies: options.replies,
    logger,
    clock: options.clock,
  });
  const arrivals = createArrivals({
    courier,
    journal,
    store,
    replies,
    logger,
    bridge: options.bridge,
    ...(options.bridgeGraceMs !== undefined ? { graceMs: options.bridgeGraceMs } : {}),
    laneBusy: (route) => byLane.has(laneKey(route)),
  });
  const markers = createMarkers({
    api,
    courier,
    store,
    logger,
    settled: (inboundId) => arrivals.settled(inboundId),
    ...(options.placeholderRetryMs !== undefined ? { retryMs: options.placeholderRetryMs } : {}),
  });
  const editPlaceholder = markers.set;

  const startTyping = (turn: LiveTurn): void => {
    // Chat actions are not messages: they do not spend the chat's send budget, so they bypass the courier.
    const tick = (): void => {
      void api.sendChatAction(turn.route.chatId, 'typing', threadParams(turn.route)).catch(() => {});
    };
    tick();
    turn.typing = setInterval(tick, typingEvery);
  };

  /**
   * `opener`: the id of the message that opened the turn (its drafts use it as their id); `thinking`:
   * whether the turn must show "Thinking…" itself (none was shown for its opening message).
   */
  const attach = (
    row: TurnRow,
    messageIds: Promise<number[]>,
    opener?: number,
    thinking = true,
  ): LiveTurn => {
    const turn: LiveTurn = {
      turnId: row.turnId,
      route: row.route,
      reply: new ReplyText(row.blocks),
      typing: undefined,
      stream: messageIds.then((ids) => {
        store.setTurnMessages(row.turnId, ids);
        const stream = replies.stream(row, ids, opener);
        if (thinking && 'thinking' in stream) stream.thinking();
        return stream;
      }),
    };
    live.set(row.turnId, turn);
    byLane.set(laneKey(row.route), row.turnId);
    return turn;
  };

  const finish = (turn: LiveTurn | undefined, row: TurnRow): void => {
    if (turn?.typing) clearInterval(turn.typing);
    if (rendering.has(row.turnId)) return;
    rendering.add(row.turnId);
    live.delete(row.turnId);
    if (byLane.get(laneKey(row.route)) === row.turnId) byLane.delete(laneKey(row.route));
    const reply = turn
      ? turn.reply.text
      : row.blocks
          .map((b) => b.text)
          .filter((t) => t.length > 0)
          .join('\n\n');
    const stream = turn?.stream ?? Promise.resolve(replies.stream(row, row.messageIds));
    const work = (async () => {
      const s = await stream;
      const final = finalText({ text: reply, outcome: row.outcome, error: row.error }, s.notesInline);
      await s.finish(final.reply);
      const note = final.separateNote;
      if (note)
        await courier.call(row.route.chatId, () =>
          api.sendMessage(row.route.chatId, note, threadParams(row.route)),
        );
      store.markTurnRendered(row.turnId);
    })()
      .catch((error: unknown) =>
        logger.error(
          { event: 'turn_render_failed', turn: row.turnId, error: errorText(error) },
          'final render failed',
        ),
      )
      .finally(() => {
        finishing.delete(work);
        rendering.delete(row.turnId);
      });
    finishing.add(work);
  };

  const started = (frame: FrameOf<'turn_started'>): void => {
    const [first, ...rest] = frame.inboundIds;
    // A private chat's rich reply is a draft when its opening message got "Thinking…" (a draft) rather
    // than a placeholder message; one with a placeholder message ("queued") grows from it.
    const drafted = replies.mode(frame.route) === 'draft' && (first === undefined || arrivals.drafted(first));
    // One transaction: the turn, the messages it takes and the placeholder it grows from (if its id is
    // known) are recorded together. Written one by one, a `kill -9` between them left a turn that the
    // restart resumed with no messages while its opening message was not taken: the resent
    // `turn_started` then found the turn live and stopped, so the placeholder — adopted at boot by the
    // send journal — stayed "…" beside a reply sent as new messages.
    const { row, firstRow } = store.atomically(() => {
      const turnRow = store.upsertTurn({
        turnId: frame.turnId,
        route: frame.route,
        request: frame.request,
        startedAt: frame.startedAt,
      });
      if (live.has(frame.turnId) || turnRow.state !== 'running') return { row: turnRow, firstRow: undefined };
      store.setInboundState(frame.inboundIds, 'taken');
      const inbound = first === undefined ? undefined : store.getInbound(first);
      const known = inbound?.placeholderId;
      if (drafted || turnRow.messageIds.length > 0 || known === undefined)
        return { row: turnRow, firstRow: inbound };
      store.setTurnMessages(frame.turnId, [known]);
      return { row: { ...turnRow, messageIds: [known] }, firstRow: inbound };
    });
    if (live.has(frame.turnId) || row.state !== 'running') return;
    // A placeholder still in flight becomes the turn's first message in the transaction that ends its send.
    const inFlight =
      first === undefined || drafted || row.messageIds.length > 0
        ? undefined
        : arrivals.opens(first, frame.turnId);
    // A known placeholder id is already in `row.messageIds`; otherwise only one in flight can be.
    const ids = (async (): Promise<number[]> => {
      if (row.messageIds.length > 0) return row.messageIds;
      const id = await inFlight;
      return id === undefined ? [] : [id];
    })();
    for (const id of rest) editPlaceholder(id, PLACEHOLDER.merged, 'merged');
    // A placeholder that said "queued" or "next step" now becomes the reply: reset its text.
    if (first !== undefined && firstRow?.placeholderKind && firstRow.placeholderKind !== 'reply')
      editPlaceholder(first, PLACEHOLDER.reply, 'reply');
    const thinking = !(first !== undefined && arrivals.thought(first));
    const turn = attach(row, ids, firstRow?.telegramMessageId, thinking);
    arrivals.settle(frame.inboundIds);
    startTyping(turn);
    cards.frame(frame.route, frame.turnId, frame);
  };

  const show = (turn: LiveTurn): void => {
    // Read when the stream edits, not at each delta (see `reply-text.ts`).
    void turn.stream.then((s) => s.show(() => turn.reply.text));
  };

  return {
    placeholder: (row) => arrivals.placeholder(row),

    frame(frame) {
      switch (frame.type) {
        case 'turn_started':
          started(frame);
          return;
        case 'text_delta': {
          const turn = live.get(frame.turnId);
          if (!turn?.reply.delta(frame.blockId, frame.delta)) return;
          show(turn);
          return;
        }
        case 'text': {
          store.setTurnBlock(frame.turnId, frame.blockId, frame.text);
          const turn = live.get(frame.turnId);
          if (turn) {
            turn.reply.block(frame.blockId, frame.text);
            show(turn);
            cards.frame(turn.route, frame.turnId, frame);
          }
          return;
        }
        case 'turn_ended': {
          store.endTurn(frame.turnId, frame.outcome, frame.error, frame.costUsd);
          const row = store.getTurn(frame.turnId);
          const turn = live.get(frame.turnId);
          if (turn) cards.frame(turn.route, frame.turnId, frame);
          if (row && row.state === 'ended') finish(turn, row);
          return;
        }
        case 'message_taken': {
          // The turn's opening messages were marked at `turn_started`; the rest are steers.
          arrivals.settle(frame.inboundIds);
          for (const id of frame.inboundIds) {
            const row = store.getInbound(id);
            if (!row || row.state === 'taken') continue;
            store.setInboundState([id], 'taken');
            editPlaceholder(id, PLACEHOLDER.taken, 'taken');
          }
          return;
        }
        case 'session_waiting': {
          for (const id of frame.inboundIds) {
            const text =
              frame.position === 0
                ? PLACEHOLDER.waiting
                : `⏳ waiting for a free session (${frame.position} conversation(s) ahead)`;
            editPlaceholder(id, text, 'waiting');
          }
          return;
        }
        case 'messages_unread': {
          store.setInboundState(frame.inboundIds, 'unread');
          arrivals.settle(frame.inboundIds);
          for (const id of frame.inboundIds) {
            editPlaceholder(
              id,
              `✗ Not read by the agent (${frame.reason}). Send it again if it still matters.`,
              'unread',
            );
          }
          return;
        }
        default: {
          const turnId = 'turnId' in frame ? frame.turnId : undefined;
          if (turnId === undefined) return;
          // Sub-agents outlive their turn: their frames still reach the card that holds them.
          const route =
            live.get(turnId)?.route ??
            (frame.type.startsWith('subagent_') ? store.getTurn(turnId)?.route : undefined);
          if (route) cards.frame(route, turnId, frame);
        }
      }
    },

    running(route) {
      return byLane.get(laneKey(route));
    },

    draftStopped(route) {
      const turnId = byLane.get(laneKey(route));
      const turn = turnId === undefined ? undefined : live.get(turnId);
      void turn?.stream.then((s) => {
        if ('stopDrafts' in s) s.stopDrafts();
      });
    },

    live() {
      return [...live.values()].map((t) => ({ turnId: t.turnId, route: t.route }));
    },

    resume() {
      markers.start();
      // Cards first: the resumed turns' next frames then reach the card they already have.
      cards.adopt(
        store.openCards().flatMap((row) =>
          row.cardMessageId === undefined
            ? []
            : [
                {
                  route: row.route,
                  turnId: row.turnId,
                  messageId: row.cardMessageId,
                  request: row.request,
                  startedAt: row.startedAt,
                  ...(row.state === 'running'
                    ? {}
                    : { ended: { outcome: row.outcome ?? 'success', error: row.error } }),
                },
              ],
        ),
      );
      for (const row of store.unfinishedTurns()) {
        if (row.state === 'ended') finish(undefined, row);
        else if (!live.has(row.turnId)) {
          const turn = attach(row, Promise.resolve(row.messageIds));
          startTyping(turn);
        }
      }
    },

    async stop() {
      markers.stop();
      for (const turn of live.values()) if (turn.typing) clearInterval(turn.typing);
      await Promise.all([...finishing]);
    },
  };
}
