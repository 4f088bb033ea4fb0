/**
 * The cadence: when a card is sent, edited, pinned, unpinned and closed. A state machine with no clock
 * and no I/O of its own — the caller feeds it events, timer ticks and the results of the actions it
 * asked for, each with the current time, and gets back the actions to perform and when to call again.
 *
 * Rules (all times configurable, see {@link CadenceOptions}):
 *
 * - A card is sent only once its turn ran for the show delay, or at once when a sub-agent starts. A turn
 *   that ends before that produces no card at all: no send, no pin (I6).
 * - After the send the card is pinned once; a failed pin leaves a live, unpinned card.
 * - Edits are coalesced (a burst of events becomes one edit after the coalesce window) and spaced by at
 *   least the minimum edit interval per card; while something runs a heartbeat re-renders the elapsed
 *   time. Nothing is emitted when the rendered text did not change. A change of stage (an answered
 *   prompt: "Waiting for your answer" back to "Working") is not coalesced and its edit is `urgent`, so
 *   the header never claims a wait the user already ended.
 * - At most one action per card is in flight: the next waits for the caller's report of the previous.
 * - A card closes when its turn ended and no sub-agent of it still runs, when nothing happened for the
 *   zombie ceiling (I9, the same path as a turn end), or when a new turn starts in the same lane (I7).
 *   Closing is: the final render, emitted exactly once (I5), then exactly one unpin if the pin took
 *   (I2, I3), then a `closed` notice. A new turn's card is not sent before the older cards of its lane
 *   closed, so pins never overlap. Running sub-agents of a superseded card move to the new card.
 *
 * Longer than 400 lines because these rules share one card record and one pass (`advance`): the show
 * delay, the one action in flight, the lane's order and the close sequence each read what the others
 * wrote, and apart they would have to pass that record around.
 */
import type { CardEvent, TurnEndedEvent } from './event.js';
import { abandonSilentSubagents, closeCard, handOver, reduce } from './reducer.js';
import { DEFAULT_STUCK_AFTER_MS, type RenderOptions, render } from './render.js';
import {
  type CardState,
  initialCardState,
  isActive,
  isEnded,
  runningSubagents,
  type Stage,
  stageOf,
} from './state.js';

/** Timing of the cadence. Every field but `laneKey` has a default. */
export interface CadenceOptions<R> {
  /**
   * The lane of a route: turns in one lane (a chat, or a forum topic in it) share one pinned card at a
   * time. For the protocol's `Route`: `(r) => \`${r.chatId}:${r.threadId ?? ''}\``.
   */
  readonly laneKey: (route: R) => string;
  /** A turn shorter than this never gets a card. Default 10 s. */
  readonly showDelayMs?: number;
  /** Events within this window after the first unrendered one share one edit. Default 400 ms. */
  readonly coalesceMs?: number;
  /** Least time between two sends or edits of one card. Default 1000 ms. */
  readonly minEditIntervalMs?: number;
  /** Re-render elapsed time this often while something runs. Default 5 s. */
  readonly heartbeatMs?: number;
  /** Close a card after this long without events, as if its turn ended. Default 10 minutes. */
  readonly zombieMs?: number;
  /** Show the stuck warning after this long without events. Default 2 minutes. */
  readonly stuckAfterMs?: number;
  /** Passed to the renderer. */
  readonly maxLength?: number;
  /** Passed to the renderer: the model is a stand-in, so its cost is labelled simulated. */
  readonly simulatedCost?: boolean;
}

/** Defaults of {@link CadenceOptions}. */
export const CADENCE_DEFAULTS = {
  showDelayMs: 10_000,
  coalesceMs: 400,
  minEditIntervalMs: 1_000,
  heartbeatMs: 5_000,
  zombieMs: 600_000,
  stuckAfterMs: DEFAULT_STUCK_AFTER_MS,
} as const satisfies Required<Omit<CadenceOptions<unknown>, 'laneKey' | 'maxLength' | 'simulatedCost'>>;

/** Fields every action carries: which card, which turn, where. */
interface ActionBase<R> {
  readonly cardId: string;
  readonly turnId: string;
  readonly route: R;
}

/**
 * What the caller should do. `send`, `edit`, `pin` and `unpin` are Telegram calls whose outcome must be
 * reported back with {@link Cadence.report}; `closed` is a notice (the card is finished and forgotten:
 * drop its pin record, log, announce completion) and needs no report.
 */
export type CardAction<R> =
  | (ActionBase<R> & { readonly kind: 'send'; readonly html: string })
  | (ActionBase<R> & {
      readonly kind: 'edit';
      readonly messageId: number;
      readonly html: string;
      readonly final: boolean;
      /** The header's stage changed since the card was last shown: perform before other cosmetic calls. */
      readonly urgent: boolean;
    })
  | (ActionBase<R> & { readonly kind: 'pin'; readonly messageId: number })
  | (ActionBase<R> & { readonly kind: 'unpin'; readonly messageId: number })
  | (ActionBase<R> & {
      readonly kind: 'closed';
      readonly stage: Stage;
      /** Set when the card was ever sent. */
      readonly messageId?: number;
    });

/**
 * The outcome of an action, reported by the caller. `edit_failed` with `gone` means the message no
 * longer exists (deleted by a user): the card stops editing it and closes. A "message is not modified"
 * answer from Telegram is an `edited`.
 */
export type ActionResult =
  | { readonly kind: 'sent'; readonly messageId: number }
  | { readonly kind: 'send_failed' }
  | { readonly kind: 'edited' }
  | { readonly kind: 'edit_failed'; readonly gone?: boolean }
  | { readonly kind: 'pinned' }
  | { readonly kind: 'pin_failed' }
  | { readonly kind: 'unpinned' }
  | { readonly kind: 'unpin_failed' };

/** What one input produced: the actions in order, and when to call {@link Cadence.tick} next. */
export interface CadenceStep<R> {
  readonly actions: readonly CardAction<R>[];
  /** Absolute time (same clock as the inputs) of the next tick, or undefined when nothing is pending. */
  readonly wakeAt: number | undefined;
}

/** A card an earlier process sent and never closed; see {@link Cadence.adopt}. */
export interface AdoptedCard<R> {
  readonly route: R;
  readonly turnId: string;
  readonly messageId: number;
  readonly request: string;
  readonly startedAt: number;
  /** Set when the turn ended while no cadence followed it. */
  readonly ended?: TurnEndedEvent;
}

/** A read-only view of a live card, for `/status`-like commands and tests. */
export interface CardView<R> {
  readonly cardId: string;
  readonly turnId: string;
  readonly route: R;
  readonly stage: Stage;
  readonly messageId: number | undefined;
  readonly pinned: boolean;
  readonly closing: boolean;
  readonly state: CardState;
}

/** The cadence for all cards of one bot. Methods never throw on odd input; stale reports are ignored. */
export interface Cadence<R> {
  /** Applies a turn event. `event.at` is the current time. */
  event(route: R, turnId: string, event: CardEvent): CadenceStep<R>;
  /**
   * Takes over cards an earlier process sent and never closed: each is edited from now on as if this
   * cadence had sent it, from a state rebuilt from its turn's request (the steps it showed are not
   * known) and, for a turn that ended meanwhile, its end. It is pinned again while its turn runs and
   * closed as any card is; its shown text is unknown, so its next render is always sent. A turn that
   * has a card here, or closed one, is left alone. Within a lane the newest adopted card supersedes the
   * older ones (give them in start order).
   */
  adopt(cards: readonly AdoptedCard<R>[], now: number): CadenceStep<R>;
  /** Lets time pass: call at `wakeAt` (early or late calls are harmless). */
  tick(now: number): CadenceStep<R>;
  /** Reports the outcome of the action for `cardId` that is in flight. */
  report(cardId: string, result: ActionResult, now: number): CadenceStep<R>;
  /** The cards not yet closed, oldest first. */
  cards(): readonly CardView<R>[];
}

type Op = 'send' | 'edit' | 'pin' | 'unpin';
type PinState = 'none' | 'pinning' | 'pinned' | 'failed' | 'unpinning' | 'unpinned';

interface Card<R> {
  readonly id: string;
  readonly turnId: string;
  readonly route: R;
  readonly lane: string;
  state: CardState;
  showAt: number;
  messageId: number | undefined;
  op: Op | undefined;
  opHtml: string | undefined;
  opStage: Stage | undefined;
  pin: PinState;
  shownHtml: string | undefined;
  shownStage: Stage | undefined;
  lastEmitAt: number;
  lastRenderAt: number;
  dirtySince: number | undefined;
  closing: boolean;
  finalDone: boolean;
  failed: boolean;
}

/** Remembered closed turns, so that late events do not raise a new card for them. */
const RECENT_CAP = 256;

/** Which result answers which action; anything else is a stale report. */
const RESULT_OP = {
  sent: 'send',
  send_failed: 'send',
  edited: 'edit',
  edit_failed: 'edit',
  pinned: 'pin',
  pin_failed: 'pin',
  unpinned: 'unpin',
  unpin_failed: 'unpin',
} as const satisfies Record<ActionResult['kind'], Op>;

/** Creates the cadence. It holds only memory; there is nothing to start or stop. */
export function createCadence<R>(options: CadenceOptions<R>): Cadence<R> {
  const t = { ...CADENCE_DEFAULTS, ...definedOnly(options) };
  const renderOptions: RenderOptions = {
    stuckAfterMs: t.stuckAfterMs,
    ...(options.maxLength === undefined ? {} : { maxLength: options.maxLength }),
    ...(options.simulatedCost === true ? { simulatedCost: true } : {}),
  };
  const cards = new Map<string, Card<R>>();
  const byTurn = new Map<string, Card<R>>();
  const byAgent = new Map<string, Card<R>>();
  const recent = new Set<string>();
  let counter = 0;
  let clock = Number.NEGATIVE_INFINITY;

  const advanceClock = (now: number): number => {
    if (Number.isFinite(now)) clock = Math.max(clock, now);
    return Number.isFinite(clock) ? clock : 0;
  };

  const draw = (card: Card<R>, now: number): string => render(card.state, now, renderOptions);

  const action = <K extends CardAction<R>['kind']>(card: Card<R>, kind: K) => ({
    kind,
    cardId: card.id,
    turnId: card.turnId,
    route: card.route,
  });

  function forget(card: Card<R>): void {
    cards.delete(card.id);
    if (byTurn.get(card.turnId) === card) byTurn.delete(card.turnId);
    for (const [agent, owner] of byAgent) if (owner === card) byAgent.delete(agent);
    recent.add(card.turnId);
    if (recent.size > RECENT_CAP) {
      const oldest = recent.values().next();
      if (!oldest.done) recent.delete(oldest.value);
    }
  }

  function laneBlocked(card: Card<R>): boolean {
    for (const other of cards.values()) {
      if (other === card) return false; // insertion order: only older cards block
      if (other.lane === card.lane) return true;
    }
    return false;
  }

  /** Whether the stage the header would show differs from the one last shown. */
  function stageChanged(card: Card<R>): boolean {
    return card.shownStage !== undefined && stageOf(card.state) !== card.shownStage;
  }

  function editDue(card: Card<R>): number | undefined {
    const spaced = card.lastEmitAt + t.minEditIntervalMs;
    let due: number | undefined;
    if (card.dirtySince !== undefined)
      due = Math.max(stageChanged(card) ? card.dirtySince : card.dirtySince + t.coalesceMs, spaced);
    if (isActive(card.state)) {
      const beat = Math.max(Math.max(card.lastRenderAt, card.lastEmitAt) + t.heartbeatMs, spaced);
      due = due === undefined ? beat : Math.min(due, beat);
    }
    return due;
  }

  /** Moves one card forward as far as it can go without a report. */
  function advance(card: Card<R>, now: number, out: CardAction<R>[]): void {
    for (let guard = 0; guard < 8 && card.op === undefined && cards.has(card.id); guard += 1) {
      if (!card.closing && now - card.state.lastEventAt >= t.zombieMs) {
        card.state = closeCard(card.state, now, 'idle');
        card.closing = true;
      }
      if (!card.closing && isEnded(card.state) && runningSubagents(card.state) > 0) {
        const before = card.state;
        card.state = abandonSilentSubagents(card.state, now - t.zombieMs, now);
        if (card.state !== before) card.dirtySince ??= now;
      }
      if (!card.closing && isEnded(card.state) && runningSubagents(card.state) === 0) card.closing = true;

      if (card.messageId === undefined) {
        if (card.failed || card.closing) {
          out.push({ ...action(card, 'closed'), stage: stageOf(card.state) });
          forget(card);
          return;
        }
        if (now < card.showAt || laneBlocked(card)) return;
        const html = draw(card, now);
        out.push({ ...action(card, 'send'), html });
        Object.assign(card, {
          op: 'send',
          opHtml: html,
          opStage: stageOf(card.state),
          lastEmitAt: now,
          lastRenderAt: now,
          dirtySince: undefined,
        });
        return;
      }
      const messageId = card.messageId;

      if (!card.closing && card.pin === 'none') {
        out.push({ ...action(card, 'pin'), messageId });
        Object.assign(card, { op: 'pin', pin: 'pinning' });
        return;
      }
      if (card.closing && !card.finalDone) {
        if (now < card.lastEmitAt + t.minEditIntervalMs) return;
        card.finalDone = true;
        const html = draw(card, now);
        if (!card.failed && html !== card.shownHtml) {
          out.push({ ...action(card, 'edit'), messageId, html, final: true, urgent: stageChanged(card) });
          Object.assign(card, { op: 'edit', opHtml: html, opStage: stageOf(card.state), lastEmitAt: now });
          return;
        }
        continue;
      }
      if (card.closing) {
        if (card.pin === 'pinned') {
          out.push({ ...action(card, 'unpin'), messageId });
          Object.assign(card, { op: 'unpin', pin: 'unpinning' });
          return;
        }
        out.push({ ...action(card, 'closed'), stage: stageOf(card.state), messageId });
        forget(card);
        return;
      }
      const due = editDue(card);
      if (due === undefined || now < due) return;
      const html = draw(card, now);
      card.lastRenderAt = now;
      card.dirtySince = undefined;
      if (html === card.shownHtml) return;
      out.push({ ...action(card, 'edit'), messageId, html, final: false, urgent: stageChanged(card) });
      Object.assign(card, { op: 'edit', opHtml: html, opStage: stageOf(card.state), lastEmitAt: now });
      return;
    }
  }

  function wakeOf(card: Card<R>): number | undefined {
    if (card.op !== undefined) return undefined; // the report drives it
    const times: number[] = [];
    if (!card.closing) times.push(card.state.lastEventAt + t.zombieMs);
    if (card.messageId === undefined) {
      if (!card.closing && !laneBlocked(card)) times.push(card.showAt);
    } else if (card.closing) {
      if (!card.finalDone) times.push(card.lastEmitAt + t.minEditIntervalMs);
    } else {
      const due = editDue(card);
      if (due !== undefined) times.push(due);
    }
    return times.length === 0 ? undefined : Math.min(...times);
  }

  function run(now: number, out: CardAction<R>[] = []): CadenceStep<R> {
    // Oldest first: a card closing in this pass unblocks the next card of its lane in the same pass.
    for (const card of [...cards.values()]) advance(card, now, out);
    let wakeAt: number | undefined;
    for (const card of cards.values()) {
      const at = wakeOf(card);
      if (at !== undefined) wakeAt = wakeAt === undefined ? at : Math.min(wakeAt, at);
    }
    return { actions: out, wakeAt: wakeAt === undefined ? undefined : Math.max(wakeAt, now) };
  }

  function open(route: R, turnId: string, at: number): Card<R> {
    counter += 1;
    const lane = options.laneKey(route);
    const card: Card<R> = {
      id: `card-${counter}`,
      turnId,
      route,
      lane,
      state: initialCardState(at),
      showAt: at + t.showDelayMs,
      messageId: undefined,
      op: undefined,
      opHtml: undefined,
      opStage: undefined,
      pin: 'none',
      shownHtml: undefined,
      shownStage: undefined,
      lastEmitAt: Number.NEGATIVE_INFINITY,
      lastRenderAt: Number.NEGATIVE_INFINITY,
      dirtySince: undefined,
      closing: false,
      finalDone: false,
      failed: false,
    };
    // A new turn closes the older open cards of its lane and inherits their running sub-agents.
    for (const older of cards.values()) {
      if (older.lane !== lane || older.closing) continue;
      older.state = abandonSilentSubagents(closeCard(older.state, at, 'superseded'), at - t.zombieMs, at);
      const moved = handOver(older.state, card.state);
      older.state = moved.from;
      card.state = moved.to;
      older.closing = true;
    }
    for (const row of card.state.subagents) byAgent.set(row.id, card);
    if (runningSubagents(card.state) > 0) card.showAt = at;
    cards.set(card.id, card);
    byTurn.set(turnId, card);
    return card;
  }

  return {
    event(route, turnId, event) {
      const now = advanceClock(event.at);
      let card = 'agentId' in event ? byAgent.get(event.agentId) : undefined;
      card ??= byTurn.get(turnId);
      if (card === undefined) {
        // Late events of a closed turn, or the end of a turn never seen, raise no card.
        if (recent.has(turnId) || event.type === 'turn_ended') return run(now);
        card = open(route, turnId, now);
      }
      if (card.closing && card.finalDone) return run(now);
      const before = card.state;
      card.state = reduce(card.state, event);
      if (card.state !== before) {
        card.dirtySince ??= now;
        if (event.type === 'turn_started')
          card.showAt = Math.min(card.showAt, card.state.startedAt + t.showDelayMs);
        if (event.type === 'subagent_started') {
          byAgent.set(event.agentId, card);
          card.showAt = Math.min(card.showAt, now);
        }
      }
      return run(now);
    },

    adopt(adopted, at) {
      const now = advanceClock(at);
      for (const shown of adopted) {
        if (byTurn.has(shown.turnId) || recent.has(shown.turnId)) continue;
        const card = open(shown.route, shown.turnId, now);
        const start = { type: 'turn_started', at: shown.startedAt, request: shown.request } as const;
        card.state = reduce(card.state, start);
        if (shown.ended) card.state = reduce(card.state, shown.ended);
        Object.assign(card, { messageId: shown.messageId, dirtySince: now });
      }
      return run(now);
    },

    tick(now) {
      return run(advanceClock(now));
    },

    report(cardId, result, at) {
      const now = advanceClock(at);
      const card = cards.get(cardId);
      if (card === undefined || card.op !== RESULT_OP[result.kind]) return run(now);
      const html = card.opHtml;
      const stage = card.opStage;
      card.op = undefined;
      card.opHtml = undefined;
      card.opStage = undefined;
      switch (result.kind) {
        case 'sent':
          card.messageId = result.messageId;
          card.shownHtml = html;
          card.shownStage = stage;
          break;
        case 'send_failed':
          card.failed = true;
          break;
        case 'edited':
          card.shownHtml = html;
          card.shownStage = stage;
          break;
        case 'edit_failed':
          if (result.gone === true) Object.assign(card, { failed: true, closing: true, finalDone: true });
          break;
        case 'pinned':
          card.pin = 'pinned';
          break;
        case 'pin_failed':
          card.pin = 'failed';
          break;
        case 'unpinned':
        case 'unpin_failed':
          card.pin = 'unpinned';
          break;
      }
      return run(now);
    },

    cards() {
      return [...cards.values()].map((card) => ({
        cardId: card.id,
        turnId: card.turnId,
        route: card.route,
        stage: stageOf(card.state),
        messageId: card.messageId,
        pinned: card.pin === 'pinned' || card.pin === 'unpinning',
        closing: card.closing,
        state: card.state,
      }));
    },
  };
}

/** Drops keys whose value is undefined, so they do not override defaults. */
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
