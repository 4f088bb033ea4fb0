/**
 * The turn machine's state (`turn-machine.ts`, `inbound-ledger.ts`): the inbound
 * messages in flight, the turns, the lane → turn map, and the step being computed. Every entry says when it
 * leaves.
 */
import type { ReplyPresentation } from '../reply/presentation.js';
import type { ReactionState } from './reaction.js';
import type { StoredTurn, StoreWrite, TurnAction } from './turn-steps.js';

/** One inbound message in flight. */
export interface Inbound {
  readonly id: string;
  readonly route: StoredTurn['route'];
  readonly telegramMessageId: number;
  /**
   * How it was acknowledged in its chat. Undefined while the message waits for a connecting bridge
   * (until `waitUntil`); `draft`: its reply is a draft (a "Thinking…" draft, maybe); `reaction`: its
   * state is a reaction on it; `placeholder`: it has a marker message (the words of a message not read,
   * or one a previous version of the gateway sent).
   */
  ack: 'draft' | 'placeholder' | 'reaction' | undefined;
  waitUntil: number | undefined;
  arrivedAt: number;
  /**
   * How its turn's reply is presented, decided when it came in (`core/reply/presentation.ts`);
   * undefined for a message no reply of which is presented (refused, or met in a sweep of the store).
   */
  reply: ReplyPresentation | undefined;
  /** Its placeholder message: none, its send in flight, or its id. */
  placeholder: 'none' | 'sending' | number;
  kind: string | undefined;
  /** Text Telegram shows on the placeholder, as far as known. */
  shown: string | undefined;
  /** Text the placeholder must reach; undefined when nothing is owed (or the reply owns it). */
  due: string | undefined;
  /** Text of the edit in flight. */
  editing: string | undefined;
  /** The reaction last asked for on it (`reaction.ts`). */
  reaction: ReactionState | undefined;
  /** Its "Thinking…" draft went out: its turn need not show one. */
  thought: boolean;
  /** What the model did with it, per the bridge. */
  role: 'opener' | 'merged' | 'taken' | 'unread' | undefined;
  /** The turn it opened, was read with, or was taken into. */
  turnId: string | undefined;
  /** Its turn was rendered (or it is unread): it leaves once nothing of it is in flight. */
  leaving: boolean;
}

/** A turn the bridge started, until its reply is rendered. */
export interface Turn {
  readonly id: string;
  readonly route: StoredTurn['route'];
  readonly openerMessage: number | undefined;
  /** How its reply is presented: its opening message's, or decided when the machine met the turn. */
  readonly presentation: ReplyPresentation;
  /** Its reply shows "Thinking…" first (its opening message got no "Thinking…" draft). */
  readonly thinking: boolean;
  /** Text arrived while it was opening: show it once open. */
  dirty: boolean;
  /** `opening`: waiting for its opening message's placeholder send; `rendering`: finish asked for. */
  stage: 'opening' | 'live' | 'rendering';
  ended: { outcome: string | undefined; error: string | undefined } | undefined;
  /** When the typing action is renewed next. */
  typingAt: number | undefined;
  /**
   * The prompts it waits on (request ids): no typing action meanwhile, since the bot is not busy but
   * waiting for the user. Replaced, never mutated, so a step's snapshot keeps the old list.
   */
  waitingOn: readonly string[];
}

/** The machine's whole state, and the output of the step being computed. */
export interface Ledger {
  inbound: Map<string, Inbound>;
  turns: Map<string, Turn>;
  /** Lane key → the turn running there. */
  lanes: Map<string, string>;
  connected: boolean;
  /** When the store's due markers are swept next. */
  sweepAt: number | undefined;
  readonly graceMs: number;
  writes: StoreWrite[];
  actions: TurnAction[];
}

/** A copy of the state (not the step's output); calling it puts the copy back. */
export function snapshot(l: Ledger): () => void {
  const inbound = new Map([...l.inbound].map(([k, v]) => [k, { ...v }]));
  const turns = new Map([...l.turns].map(([k, v]) => [k, { ...v }]));
  const lanes = new Map(l.lanes);
  const { connected, sweepAt } = l;
  return () => Object.assign(l, { inbound, turns, lanes, connected, sweepAt });
}

/** The earliest time something waits for: a grace expiry, a typing renewal, a sweep. */
export function nextWake(l: Ledger): number | undefined {
  let next = l.sweepAt;
  const earlier = (t: number | undefined): void => {
    if (t !== undefined && (next === undefined || t < next)) next = t;
  };
  for (const entry of l.inbound.values()) earlier(entry.waitUntil);
  for (const turn of l.turns.values()) earlier(turn.typingAt);
  return next;
}
