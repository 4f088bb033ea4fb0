/**
 * The shell of the turn machine (`core/turns/turn-machine.ts`): feeds it the bridge's frames, the inbound
 * messages, the bridge's connection and the outcome of every action, each stamped with the clock's
 * time; applies the store writes of each step in ONE transaction before any Telegram call of that step;
 * performs the actions — placeholders and drafts (`arrivals.ts`), marker edits
 * (`markers.ts`), the replies (`turn-replies.ts`, over `Replies` in `io/reply/replies.ts`), typing,
 * cards — and arms one timer for the step's wake-up. How a message's reply is presented is decided as it
 * comes in, from the conversation's settings and what the server lacks (`io/telegram/server-parts.ts`).
 *
 * Contract with the channel: `frame` applies its writes synchronously and starts the Telegram work
 * without awaiting it, so the bridge's frames are acknowledged once they are safe here and a slow chat
 * never holds up the socket; a write that fails throws out of `frame`, so the frame is not acknowledged.
 * After a restart, `resume` hands the machine the turns left running or ended but not yet rendered.
 */
import { type Clock, createWakeTimer, type Logger, type Route, systemClock } from '@switchyard/protocol';
import { threadParams } from '../../core/intake/route.js';
import { decidePresentation, type ReplyPresentation } from '../../core/reply/presentation.js';
import { createTurnMachine } from '../../core/turns/turn-machine.js';
import type {
  BudgetVerdict,
  TurnAction,
  TurnEvent,
  TurnFrame,
  TurnStep,
} from '../../core/turns/turn-steps.js';
import type { GatewayStore, InboundRow } from '../../store/store.js';
import type { CardDriver } from '../card/card-driver.js';
import { createReplies } from '../reply/replies.js';
import { type BotApi, errorText } from '../telegram/bot-api.js';
import type { Courier } from '../telegram/courier.js';
import type { SendJournal } from '../telegram/send-journal.js';
import { createServerParts, type ServerPartsState } from '../telegram/server-parts.js';
import { createArrivals } from './arrivals.js';
import { createMarkerEdits } from './markers.js';
import { createReactions } from './reactions.js';
import { createTurnReplies } from './turn-replies.js';
import { writeTurnStep } from './turn-writes.js';

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
    | 'setMessageReaction'
  >;
  /** Sends placeholders and reply messages as their owners' (see `io/telegram/send-journal.ts`). */
  journal: Pick<SendJournal, 'send' | 'sendRich'>;
  /** Rich messages and drafts (default), or today's placeholder edits and HTML render. */
  replies?: 'rich' | 'classic';
  /** A conversation's own `replies` (`/settings`), over the agent's; undefined: the agent's. */
  repliesOf?: (route: Route) => 'rich' | 'classic' | undefined;
  courier: Courier;
  store: GatewayStore;
  cards: CardDriver;
  logger: Logger;
  /** Whether the bridge is connected now; changes are told through {@link Turns.connection}. */
  bridge: { connected(): boolean };
  /** How long a message waits silently for a connecting bridge; default `BRIDGE_GRACE_MS` (3 s). */
  bridgeGraceMs?: number;
  /** How often the typing action is renewed; default 4500 ms (Telegram shows it for 5 s). */
  typingEveryMs?: number;
  /** How long after a failed marker edit or reaction it is tried again; default 15 s. */
  placeholderRetryMs?: number;
  /** Time and timers; default {@link systemClock}. */
  clock?: Clock;
  /**
   * The run's knowledge of the server: its newer Bot API parts (drafts' `keep_on_stop`), and whether it
   * lacks rich messages (which the presentation reads); default a fresh one.
   */
  serverParts?: ServerPartsState;
}

/** The turn tracker's handle. */
export interface Turns {
  /**
   * A durable inbound message reaches the machine (a no-op for one it holds) with today's budget's
   * verdict on it, asked first: decided at once — a refused message is marked unread here, by the
   * machine's own step — and acknowledged in its chat (a draft, a reaction, a refused one's marker) when
   * the caller calls `acknowledge`, after it has handed an admitted message to the bridge: preparing an
   * HTTP request first would delay the message (`pnpm bench`, ingress). The order is the caller's, in
   * the open: the budget, arrive, forward, acknowledge.
   */
  arrive(row: InboundRow, budget: BudgetVerdict): { acknowledge(): void };
  /**
   * Applies a frame the turns own: the dispatch (`io/bridge/bridge-frames.ts`) hands over the frames
   * `core/bridge/frame-owner.ts` gives the turns and the prompts, so who owns a frame is looked up once.
   */
  frame(frame: TurnFrame): void;
  /**
   * Messages the gateway will not pass on after the machine took them (a frame the channel or the bridge
   * refused, a held message today's budget refused when it was weighed again, the boot's re-send): each
   * is marked unread with `reason` and its marker says so; one the machine does not hold is adopted here
   * from the store.
   */
  refused(inboundIds: readonly string[], reason: string): void;
  /** The bridge connected or went away. */
  connection(connected: boolean): void;
  /** The turn running in a route, if any. */
  running(route: Route): string | undefined;
  /** The inbound ids the running turn of a route has read (none when no turn runs there). */
  readIn(route: Route): string[];
  /** All running turns, for `/status`. */
  live(): { turnId: string; route: Route }[];
  /**
   * The user pressed the stop button of a draft in `route` (`stopped_message_generation`): that turn's
   * reply sends no more drafts. The caller interrupts the turn as `/stop` does.
   */
  draftStopped(route: Route): void;
  /** Re-attaches turns left running or unrendered by a previous process, and the cards they left open. */
  resume(): void;
  /** Entries the machine holds (inbound messages plus turns): zero once every turn is rendered. */
  size(): number;
  /** Stops the timer and waits for final renders in flight. */
  stop(): Promise<void>;
}

/** A message's acknowledgement and its reactions: what a step performs after its other actions. */
const SHOWN_LAST: ReadonlySet<TurnAction['kind']> = new Set(['send_placeholder', 'thinking', 'react']);

/** Creates the turn tracker. */
export function createTurns(options: TurnsOptions): Turns {
  const { api, courier, store, cards, logger } = options;
  const clock = options.clock ?? systemClock;
  const machine = createTurnMachine({
    ...(options.bridgeGraceMs !== undefined ? { graceMs: options.bridgeGraceMs } : {}),
    ...(options.typingEveryMs !== undefined ? { typingEveryMs: options.typingEveryMs } : {}),
    ...(options.placeholderRetryMs !== undefined ? { retryMs: options.placeholderRetryMs } : {}),
  });
  const serverParts = options.serverParts ?? createServerParts(logger);
  const replies = createReplies({
    api,
    journal: options.journal,
    courier,
    store,
    logger,
    clock,
    serverParts,
  });
  const turnReplies = createTurnReplies({
    replies,
    api,
    courier,
    logger,
    clock,
    rendered: (turnId, ok) => run({ type: 'rendered', turnId, ok, at: now() }),
  });
  const editMarker = createMarkerEdits({ api, courier, logger });
  const reactions = createReactions({
    api,
    courier,
    logger,
    clock,
    ...(options.placeholderRetryMs !== undefined ? { retryMs: options.placeholderRetryMs } : {}),
  });
  let stopped = false;

  /** Feeds one event and applies its writes in one transaction; the actions are the caller's to run. */
  const decide = (event: TurnEvent): TurnStep => {
    const step = machine.input(event);
    try {
      if (step.writes.length > 0)
        store.atomically(() => {
          for (const w of step.writes) writeTurnStep(store, w);
        });
    } catch (error) {
      // Not written, so not done: the machine forgets the step, and the caller (a frame not yet
      // acknowledged, a send's transaction) fails with it.
      machine.undo();
      throw error;
    }
    return step;
  };
  /**
   * Performs a step's actions in the order they must run: the step's own work first (the replies, the
   * cards, typing, marker edits), then what the messages show — their acknowledgements (a marker
   * message, a "Thinking…" draft) and reactions, cosmetic calls the courier would put behind the others
   * anyway. The order is this loop's, not the event loop's: no request waits for a microtask.
   */
  const perform = (step: TurnStep): void => {
    for (const action of step.actions) if (!SHOWN_LAST.has(action.kind)) act(action);
    for (const action of step.actions) if (SHOWN_LAST.has(action.kind)) act(action);
    wake.arm(step.wakeAt);
  };
  const run = (event: TurnEvent): void => perform(decide(event));
  const now = (): number => clock.now();

  const arrivals = createArrivals({
    courier,
    journal: options.journal,
    replies,
    logger,
    decide,
    perform,
    now,
  });

  const act = (action: TurnAction): void => {
    switch (action.kind) {
      // An acknowledgement's request starts after the step's other actions (see `perform`); the
      // machine's state is already decided.
      case 'send_placeholder':
        void arrivals.send(action).catch(failed('placeholder_outcome_failed'));
        return;
      case 'thinking':
        arrivals.thinking(action);
        return;
      case 'edit_marker':
        void editMarker(action)
          .then((outcome) => {
            if (action.due && !stopped)
              run({ type: 'marker', inboundId: action.inboundId, text: action.text, outcome, at: now() });
          })
          .catch(failed('marker_outcome_failed'));
        return;
      case 'track':
        turnReplies.track(action);
        return;
      case 'open':
        turnReplies.open(action);
        return;
      case 'show':
        turnReplies.show(action.turnId);
        return;
      case 'finish':
        turnReplies.finish(action);
        return;
      case 'stop_drafts':
        turnReplies.stopDrafts(action.turnId);
        return;
      case 'react':
        // Cosmetic, and started when an acknowledgement's is (see `perform`).
        reactions.show(action.route, action.messageId, action.state);
        return;
      case 'typing':
        // Chat actions are not messages: they spend no send budget, so they bypass the courier.
        void api.sendChatAction(action.route.chatId, 'typing', threadParams(action.route)).catch(() => {});
        return;
      case 'card':
        cards.frame(action.route, action.turnId, action.frame);
        return;
      case 'sweep_markers':
        run({ type: 'due_markers', rows: store.duePlaceholders(), at: now() });
        return;
    }
  };

  /** Logs an outcome the store could not record (it stays due, or the turn unrendered, for the next boot). */
  const failed =
    (event: string) =>
    (error: unknown): void =>
      logger.error({ event, error: errorText(error) }, 'an outcome could not be recorded');

  /** The stored rows of the inbound messages named that the machine does not hold (it adopts them). */
  const unheld = (ids: readonly string[]): InboundRow[] =>
    ids.flatMap((id) => {
      const row = machine.holdsInbound(id) ? undefined : store.getInbound(id);
      return row ? [row] : [];
    });
  const wake = createWakeTimer(clock, (at) => run({ type: 'tick', at }));
  /** The one call of the decision, as a message (or a turn the machine has not met) comes in. */
  const presentationOf = (route: Route): ReplyPresentation =>
    decidePresentation({
      route,
      replies: options.repliesOf?.(route) ?? options.replies ?? 'rich',
      richMissing: serverParts.richMissing(),
    });

  return {
    arrive(row, budget) {
      const step = decide({
        type: 'arrived',
        row,
        presentation: presentationOf(row.route),
        budget,
        bridgeConnected: options.bridge.connected(),
        at: now(),
      });
      return { acknowledge: () => perform(step) };
    },

    frame(f) {
      const inbound = unheld('inboundIds' in f ? f.inboundIds : []);
      const turnId = 'turnId' in f ? f.turnId : undefined;
      const turn = turnId === undefined || machine.holdsTurn(turnId) ? undefined : store.getTurn(turnId);
      // A delta is applied here (the shell holds the reply's text); an outdated one changes nothing.
      if (f.type === 'text_delta' && !turnReplies.delta(f.turnId, f.blockId, f.delta)) return;
      if (f.type === 'text') turnReplies.block(f.turnId, f.blockId, f.text);
      const route = 'route' in f ? f.route : turn?.route;
      // Read only for what the machine meets here first; a frame without a route opens no turn.
      const presentation = route === undefined ? 'classic' : presentationOf(route);
      run({ type: 'frame', frame: f, inbound, turn, presentation, at: now() });
    },

    refused(inboundIds, reason) {
      run({ type: 'refused', inboundIds, reason, inbound: unheld(inboundIds), at: now() });
    },

    connection(connected) {
      run({ type: 'bridge', connected, at: now() });
    },

    running: (route) => machine.running(route),
    readIn: (route) => {
      const turnId = machine.running(route);
      return turnId === undefined ? [] : machine.readIn(turnId);
    },
    live: () => machine.live(),
    size: () => machine.size(),

    draftStopped(route) {
      run({ type: 'draft_stopped', route, at: now() });
    },

    resume() {
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
      const turns = store
        .unfinishedTurns()
        .map((row) => ({ ...row, presentation: presentationOf(row.route) }));
      run({ type: 'resume', turns, at: now() });
    },

    async stop() {
      stopped = true;
      wake.stop();
      await turnReplies.drain();
    },
  };
}
