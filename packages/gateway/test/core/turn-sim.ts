/**
 * A stand-in shell for the turn machine's table tests: an in-memory store that applies each step's
 * writes, a Telegram of marker messages keyed by id, the reaction each inbound message shows, the
 * answers in the order they were rendered, and one timer on a ManualClock for the step's wake-up.
 * Marker sends and edits are answered at once unless the test holds them.
 */
import { ManualClock, type Route } from '@switchyard/protocol';
import { decidePresentation } from '../../src/core/reply/presentation.js';
import { REACTION_EMOJI, type ReactionState } from '../../src/core/turns/reaction.js';
import { createTurnMachine, type TurnMachine } from '../../src/core/turns/turn-machine.js';
import type {
  BudgetVerdict,
  MarkerOutcome,
  StoredInbound,
  StoredTurn,
  StoreWrite,
  TurnAction,
  TurnEvent,
  TurnFrame,
} from '../../src/core/turns/turn-steps.js';

type Distribute<E> = E extends unknown ? Omit<E, 'at'> : never;
/** An event without its time (the simulation stamps it). */
export type Input = Distribute<TurnEvent>;
type Action<K extends TurnAction['kind']> = TurnAction & { kind: K };

/** The simulation; see the module comment. */
export class TurnSim {
  readonly clock = new ManualClock(1_000_000);
  readonly machine: TurnMachine;
  readonly inbound = new Map<string, StoredInbound>();
  readonly turns = new Map<string, StoredTurn & { request: string }>();
  /** Telegram: message id → text. */
  readonly messages = new Map<number, string>();
  readonly log: TurnAction[] = [];
  /** The state each inbound message shows as a reaction (the last one asked for). */
  readonly reactions = new Map<string, ReactionState>();
  /** The answers, in the order their turns were rendered: `turnId: text`. */
  readonly answers: string[] = [];
  /** Sends and edits held back by the test, answered with `answerSends` / `answerEdits`. */
  readonly heldSends: Action<'send_placeholder'>[] = [];
  readonly heldEdits: Action<'edit_marker'>[] = [];
  holdSends = false;
  holdEdits = false;
  /** The next edits fail (Telegram refuses them). */
  failEdits = 0;
  connected = true;
  #nextId = 100;
  #telegramId = 1;
  #timer: ReturnType<ManualClock['setTimeout']> | undefined;

  constructor(options: Parameters<typeof createTurnMachine>[0] = {}) {
    this.machine = createTurnMachine({ graceMs: 3000, typingEveryMs: 4500, retryMs: 15_000, ...options });
  }

  /** Feeds an event stamped with the clock's time and performs the step. */
  feed(event: Input): void {
    const step = this.machine.input({ ...event, at: this.clock.now() } as TurnEvent);
    for (const w of step.writes) this.applyWrite(w);
    for (const a of step.actions) this.#act(a);
    this.clock.clearTimeout(this.#timer);
    if (step.wakeAt !== undefined)
      this.#timer = this.clock.setTimeout(() => this.feed({ type: 'tick' }), step.wakeAt - this.clock.now());
  }

  /**
   * A user's message in `route` becomes durable and reaches the machine with today's budget's verdict
   * (`budget`, admitted unless given); returns its inbound id.
   */
  message(route: Route, inboundId: string, budget: BudgetVerdict = { admit: true }): string {
    const row: StoredInbound = {
      inboundId,
      route,
      telegramMessageId: this.#telegramId++,
      state: 'sent',
      placeholderId: undefined,
      placeholderKind: undefined,
      placeholderDue: undefined,
    };
    this.inbound.set(inboundId, row);
    this.feed({
      type: 'arrived',
      row: { ...row },
      presentation: decidePresentation({ route, replies: 'rich', richMissing: false }),
      budget,
      bridgeConnected: this.connected,
    });
    return inboundId;
  }

  bridge(connected: boolean): void {
    this.connected = connected;
    this.feed({ type: 'bridge', connected });
  }

  /** A frame from the bridge, with the stored rows the shell passes for what the machine does not hold. */
  frame(frame: TurnFrame): void {
    const ids = 'inboundIds' in frame ? frame.inboundIds : [];
    const inbound = ids.flatMap((id) => {
      const row = this.machine.holdsInbound(id) ? undefined : this.inbound.get(id);
      return row ? [{ ...row }] : [];
    });
    const turnId = 'turnId' in frame ? frame.turnId : undefined;
    const turn = turnId === undefined || this.machine.holdsTurn(turnId) ? undefined : this.turns.get(turnId);
    const route = 'route' in frame ? frame.route : turn?.route;
    this.feed({
      type: 'frame',
      frame,
      inbound,
      turn: turn ? structuredClone(turn) : undefined,
      presentation: decidePresentation({
        route: route ?? { chatId: 0 },
        replies: 'rich',
        richMissing: false,
      }),
    });
  }

  /** The gateway will not pass messages on (a budget, the channel), with the rows the shell passes. */
  refused(inboundIds: string[], reason: string): void {
    const inbound = inboundIds.flatMap((id) => {
      const row = this.machine.holdsInbound(id) ? undefined : this.inbound.get(id);
      return row ? [{ ...row }] : [];
    });
    this.feed({ type: 'refused', inboundIds, reason, inbound });
  }

  started(turnId: string, route: Route, inboundIds: string[]): void {
    this.frame({ type: 'turn_started', turnId, route, inboundIds, request: 'r', startedAt: 0 });
  }

  /** The turn answers `text` and ends. */
  answer(turnId: string, text: string): void {
    this.frame({ type: 'text', turnId, blockId: `${turnId}-b`, text });
    this.frame({ type: 'turn_ended', turnId, outcome: 'success' });
  }

  answerSends(order: 'fifo' | 'lifo' = 'fifo', outcome: 'sent' | 'failed' = 'sent'): void {
    while (this.heldSends.length > 0) {
      const send = (
        order === 'fifo' ? this.heldSends.shift() : this.heldSends.pop()
      ) as Action<'send_placeholder'>;
      this.#send(send, outcome);
    }
  }

  answerEdits(): void {
    for (const edit of this.heldEdits.splice(0)) this.#edit(edit);
  }

  /** What the placeholder of `inboundId` shows in Telegram, if it has one. */
  marker(inboundId: string): string | undefined {
    const id = this.inbound.get(inboundId)?.placeholderId;
    return id === undefined ? undefined : this.messages.get(id);
  }

  /** The reaction `inboundId` shows (its emoji), if any. */
  reaction(inboundId: string): string | undefined {
    const state = this.reactions.get(inboundId);
    return state === undefined ? undefined : REACTION_EMOJI[state];
  }

  /** Messages whose marker is still owed in the store. */
  owed(): string[] {
    return [...this.inbound.values()].filter((r) => r.placeholderDue !== undefined).map((r) => r.inboundId);
  }

  actions<K extends TurnAction['kind']>(kind: K): Action<K>[] {
    return this.log.filter((a): a is Action<K> => a.kind === kind);
  }

  #send(action: Action<'send_placeholder'>, outcome: 'sent' | 'failed'): void {
    if (outcome === 'failed') {
      this.feed({ type: 'placeholder_failed', inboundId: action.inboundId });
      return;
    }
    const id = this.#nextId++;
    this.messages.set(id, action.text);
    this.feed({ type: 'placeholder_sent', inboundId: action.inboundId, messageId: id });
  }

  #edit(action: Action<'edit_marker'>): void {
    let outcome: MarkerOutcome = 'shown';
    if (this.failEdits > 0) {
      this.failEdits--;
      outcome = 'failed';
    } else this.messages.set(action.messageId, action.text);
    if (action.due) this.feed({ type: 'marker', inboundId: action.inboundId, text: action.text, outcome });
  }

  #act(action: TurnAction): void {
    this.log.push(action);
    switch (action.kind) {
      case 'send_placeholder':
        if (this.holdSends) this.heldSends.push(action);
        else this.#send(action, 'sent');
        return;
      case 'edit_marker':
        if (this.holdEdits) this.heldEdits.push(action);
        else this.#edit(action);
        return;
      case 'react':
        this.reactions.set(action.inboundId, action.state);
        return;
      case 'thinking':
        this.feed({ type: 'thought', inboundId: action.inboundId, shown: true });
        return;
      case 'finish': {
        // The reply: its first message (the opening placeholder, if it grew from one) shows the answer.
        const turn = this.turns.get(action.turnId);
        const first = turn?.messageIds[0];
        const text = turn?.blocks.map((b) => b.text).join('\n\n') ?? '';
        if (first !== undefined) this.messages.set(first, text);
        this.answers.push(`${action.turnId}: ${text}`);
        this.feed({ type: 'rendered', turnId: action.turnId, ok: true });
        return;
      }
      case 'sweep_markers':
        this.feed({
          type: 'due_markers',
          rows: [...this.inbound.values()]
            .filter((r) => r.placeholderDue !== undefined && r.placeholderId !== undefined)
            .map((r) => ({ ...r })),
        });
        return;
      default:
        return;
    }
  }

  /** The store's semantics of each write (as `store/inbox.ts` and `store/turn-table.ts` have them). */
  applyWrite(w: StoreWrite): void {
    const row = 'inboundId' in w ? this.inbound.get(w.inboundId) : undefined;
    switch (w.kind) {
      case 'turn':
        if (!this.turns.has(w.turnId))
          this.turns.set(w.turnId, {
            turnId: w.turnId,
            route: w.route,
            request: w.request,
            state: 'running',
            blocks: [],
            messageIds: [],
            outcome: undefined,
            error: undefined,
          });
        return;
      case 'inbound_state':
        for (const id of w.inboundIds) {
          const r = this.inbound.get(id);
          if (r) r.state = w.state;
        }
        return;
      case 'turn_messages': {
        const t = this.turns.get(w.turnId);
        if (t) t.messageIds = [...w.messageIds];
        return;
      }
      case 'placeholder':
        if (row) {
          row.placeholderId = w.messageId;
          row.placeholderKind ??= w.placeholderKind;
        }
        return;
      case 'marker_due':
        if (row) {
          row.placeholderKind = w.placeholderKind;
          row.placeholderDue = w.text;
        }
        return;
      case 'marker_shown':
        if (row && row.placeholderDue === w.text) row.placeholderDue = undefined;
        return;
      case 'turn_block': {
        const t = this.turns.get(w.turnId);
        if (!t) return;
        const block = t.blocks.find((b) => b.id === w.blockId);
        if (block) block.text = w.text;
        else t.blocks.push({ id: w.blockId, text: w.text });
        return;
      }
      case 'turn_ended': {
        const t = this.turns.get(w.turnId);
        if (t && t.state === 'running')
          Object.assign(t, { state: 'ended', outcome: w.outcome, error: w.error });
        return;
      }
      case 'turn_rendered': {
        const t = this.turns.get(w.turnId);
        if (t) t.state = 'rendered';
        return;
      }
    }
  }
}
