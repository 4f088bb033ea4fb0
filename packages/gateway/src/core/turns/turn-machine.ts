/**
 * The turn machine: every conversation's inbound messages, their markers, and the turns the bridge
 * runs, as one state machine with no clock and no I/O (the shell is `io/turns/turns.ts`). Events stamped with
 * the caller's time go in (`turn-steps.ts`); store writes, actions and a wake-up time come out.
 * Rules:
 * - How a turn's reply is presented (a draft, rich edits, classic) is decided once, when its opening
 *   message comes in (`core/reply/presentation.ts`, by the shell, handed in with the message), held on
 *   the message's entry and then its turn, and carried to the reply in the `open` action. How the
 *   message is acknowledged follows from it (`arrival.ts`).
 * - Today's budget is asked before the machine takes a message, and its verdict comes in with it: a
 *   refused message is marked unread by its own `arrived` step, so nothing past the machine reports back.
 * - Its state is a reaction (`reaction.ts`): 👀 waiting, ✍ in the running turn, 👌 read with
 *   others or answered; only a message the agent will never read gets words (a marker message).
 * - "Steer or new turn" is the bridge's: `turn_started` names a turn's messages (the first opens it,
 *   the rest are read together with it), `message_taken` the steers. A steer marker is provisional.
 * - Every marker message a model read reaches its final text; a due text is written (`marker_due`) before
 *   the edit is tried and cleared (`marker_shown`) only once Telegram confirms: a failed edit is made
 *   by the next sweep of the store (`sweep_markers`), at boot and `retryMs` after a failure.
 * - At most one marker edit per message is in flight; a newer due text follows when it ends.
 * - A turn opening with a placeholder still in flight waits for it: the send's own transaction names
 *   it as the turn's first message, so a crash cannot resume the turn without it.
 *
 * Bounded: an inbound entry leaves when its turn is rendered or it is reported unread (once no send or
 * edit of it is in flight); a turn leaves when it is rendered. `size()` counts both.
 *
 * Longer than 400 lines because it is the event switch of one machine (the steps it calls are in
 * `turn-steps.ts`); split by event, the order a message's states take would be read across files.
 */

import { laneKey } from '../intake/route.js';
import { openedAs, type ReplyPresentation } from '../reply/presentation.js';
import { BRIDGE_GRACE_MS } from './arrival.js';
import {
  acknowledge,
  adoptInbound,
  becomeReply,
  dueMarkers,
  flush,
  forget,
  mark,
  markerEnded,
  react,
  taken,
  unread,
  waiting,
} from './inbound-ledger.js';
import { PLACEHOLDER } from './marker-text.js';
import { type Inbound, type Ledger, nextWake, snapshot, type Turn } from './turn-state.js';
import type { StoredTurn, TurnEvent, TurnMachine, TurnMachineOptions } from './turn-steps.js';

export type { TurnMachine, TurnMachineOptions } from './turn-steps.js';

/** What a turn waits on while the usage limit is waited out (beside its open prompts' request ids). */
const USAGE_LIMIT_WAIT = 'usage-limit';

/** Creates the machine; one per gateway, over all conversations. */
export function createTurnMachine(options: TurnMachineOptions = {}): TurnMachine {
  const graceMs = options.graceMs ?? BRIDGE_GRACE_MS;
  const typingEvery = options.typingEveryMs ?? 4500;
  const retryMs = options.retryMs ?? 15_000;
  const l: Ledger = {
    inbound: new Map(),
    turns: new Map(),
    lanes: new Map(),
    connected: false,
    sweepAt: undefined,
    graceMs,
    writes: [],
    actions: [],
  };
  /** Puts back the state before the last input that may write, for `undo`. */
  let before: (() => void) | undefined;

  const open = (turn: Turn, messageIds: readonly number[]): void => {
    turn.stage = 'live';
    l.actions.push({
      kind: 'open',
      turnId: turn.id,
      route: turn.route,
      messageIds,
      presentation: openedAs(turn.presentation, messageIds),
      opener: turn.openerMessage,
      thinking: turn.thinking,
    });
    if (turn.ended) finish(turn);
    else if (turn.dirty) l.actions.push({ kind: 'show', turnId: turn.id });
  };

  const finish = (turn: Turn): void => {
    turn.stage = 'rendering';
    turn.typingAt = undefined;
    if (l.lanes.get(laneKey(turn.route)) === turn.id) l.lanes.delete(laneKey(turn.route));
    l.actions.push({
      kind: 'finish',
      turnId: turn.id,
      route: turn.route,
      outcome: turn.ended?.outcome,
      error: turn.ended?.error,
    });
  };

  /** `presentation`: the reply's when the turn has no opening message the machine holds. */
  const addTurn = (
    row: Pick<StoredTurn, 'turnId' | 'route' | 'blocks'>,
    first: Inbound | undefined,
    presentation: ReplyPresentation,
    at: number,
    ended?: Turn['ended'],
  ): Turn => {
    const turn: Turn = {
      id: row.turnId,
      route: row.route,
      presentation: first?.reply ?? presentation,
      openerMessage: first?.telegramMessageId,
      thinking: ended === undefined && (first === undefined || !first.thought),
      dirty: false,
      stage: 'opening',
      ended,
      typingAt: at + typingEvery,
      waitingOn: [],
    };
    l.turns.set(turn.id, turn);
    // A turn that ended already (rendered from the store) does not take its lane from a running one.
    if (!ended) l.lanes.set(laneKey(turn.route), turn.id);
    l.actions.push({ kind: 'track', turnId: turn.id, blocks: row.blocks });
    l.actions.push({ kind: 'typing', route: turn.route });
    return turn;
  };

  const started = (
    frame: Extract<TurnEvent, { type: 'frame' }>['frame'] & { type: 'turn_started' },
    stored: StoredTurn | undefined,
    presentation: ReplyPresentation,
    at: number,
  ): void => {
    if (l.turns.has(frame.turnId) || (stored && stored.state !== 'running')) return;
    const [firstId] = frame.inboundIds;
    const first = firstId === undefined ? undefined : l.inbound.get(firstId);
    l.writes.push({
      kind: 'turn',
      turnId: frame.turnId,
      route: frame.route,
      request: frame.request,
      startedAt: frame.startedAt,
    });
    if (frame.inboundIds.length > 0)
      l.writes.push({ kind: 'inbound_state', inboundIds: frame.inboundIds, state: 'taken' });
    for (const id of frame.inboundIds) {
      const entry = l.inbound.get(id);
      if (!entry) continue;
      entry.role = id === firstId ? 'opener' : 'merged';
      entry.turnId = frame.turnId;
      entry.leaving = false;
      if (entry.role === 'merged') mark(l, entry, 'merged', PLACEHOLDER.merged, 'read');
      // Read while it still waited for the bridge: acknowledged now, as its turn's message.
      if (entry.ack === undefined) acknowledge(l, entry, at);
      if (entry.role === 'opener' && entry.placeholder === 'none') react(l, entry, 'reading');
    }
    if (first) becomeReply(l, first);
    const turn = addTurn(
      { turnId: frame.turnId, route: frame.route, blocks: stored?.blocks ?? [] },
      first,
      presentation,
      at,
    );
    l.actions.push({ kind: 'card', route: frame.route, turnId: frame.turnId, frame });
    const known = stored?.messageIds ?? [];
    if (known.length > 0) {
      open(turn, known);
      return;
    }
    // A draft reply, or one with no message of its opener to grow from, opens with none.
    if (first === undefined || first.ack === 'draft' || first.placeholder === 'none') {
      open(turn, []);
      return;
    }
    if (first.placeholder === 'sending') return; // opens when the send ends (`placeholder_sent`)
    l.writes.push({ kind: 'turn_messages', turnId: turn.id, messageIds: [first.placeholder] });
    open(turn, [first.placeholder]);
  };

  const placeholderEnded = (entry: Inbound, messageId: number | undefined): void => {
    entry.placeholder = messageId ?? 'none';
    if (messageId !== undefined)
      l.writes.push({
        kind: 'placeholder',
        inboundId: entry.id,
        messageId,
        placeholderKind: entry.kind ?? 'reply',
      });
    else entry.due = undefined;
    const turn = entry.turnId === undefined ? undefined : l.turns.get(entry.turnId);
    if (entry.role === 'opener' && turn?.stage === 'opening') {
      if (messageId !== undefined) {
        l.writes.push({ kind: 'turn_messages', turnId: turn.id, messageIds: [messageId] });
        becomeReply(l, entry);
      }
      open(turn, messageId === undefined ? [] : [messageId]);
    } else if (entry.role === 'opener') becomeReply(l, entry);
    flush(l, entry);
    forget(l, entry);
  };

  const frameEvent = (event: Extract<TurnEvent, { type: 'frame' }>): void => {
    const { frame, at } = event;
    for (const row of event.inbound) adoptInbound(l, row, event.presentation, at);
    switch (frame.type) {
      case 'turn_started':
        started(frame, event.turn, event.presentation, at);
        return;
      case 'message_taken':
        taken(
          l,
          frame.inboundIds,
          frame.turnId,
          (id) => l.turns.get(id)?.stage === 'live' || l.turns.get(id)?.stage === 'opening',
          at,
        );
        return;
      case 'session_waiting':
        waiting(l, frame.inboundIds, frame.position);
        return;
      case 'messages_unread':
        unread(l, frame.inboundIds, frame.reason);
        return;
      case 'text': {
        l.writes.push({ kind: 'turn_block', turnId: frame.turnId, blockId: frame.blockId, text: frame.text });
        const turn = l.turns.get(frame.turnId);
        if (!turn) return;
        if (turn.stage === 'live') l.actions.push({ kind: 'show', turnId: turn.id });
        else turn.dirty = true;
        l.actions.push({ kind: 'card', route: turn.route, turnId: turn.id, frame });
        return;
      }
      case 'text_delta': {
        const turn = l.turns.get(frame.turnId);
        if (turn?.stage === 'live') l.actions.push({ kind: 'show', turnId: frame.turnId });
        else if (turn) turn.dirty = true;
        return;
      }
      case 'turn_ended': {
        l.writes.push({
          kind: 'turn_ended',
          turnId: frame.turnId,
          outcome: frame.outcome,
          error: frame.error,
          ...(frame.costUsd !== undefined ? { costUsd: frame.costUsd } : {}),
        });
        const ended = { outcome: frame.outcome, error: frame.error };
        let turn = l.turns.get(frame.turnId);
        if (turn) l.actions.push({ kind: 'card', route: turn.route, turnId: turn.id, frame });
        else if (event.turn && event.turn.state !== 'rendered') {
          // Ended while no process followed it (its start was before a restart): render what is stored.
          turn = addTurn(event.turn, undefined, event.presentation, at, ended);
          open(turn, event.turn.messageIds);
          return;
        }
        if (!turn || turn.ended) return;
        turn.ended = ended;
        if (turn.stage === 'live') finish(turn);
        return;
      }
      case 'permission_request':
      case 'question': {
        const turn = frame.turnId === undefined ? undefined : l.turns.get(frame.turnId);
        if (turn && !turn.waitingOn.includes(frame.requestId)) {
          turn.waitingOn = [...turn.waitingOn, frame.requestId];
          turn.typingAt = undefined;
        }
        if (turn) l.actions.push({ kind: 'card', route: turn.route, turnId: turn.id, frame });
        return;
      }
      case 'usage_limit': {
        // The turn waits for the limit's reset (the bridge holds it open): no typing until it goes on.
        const turn = frame.turnId === undefined ? undefined : l.turns.get(frame.turnId);
        if (!turn) return;
        if (frame.state === 'limited') {
          if (!turn.waitingOn.includes(USAGE_LIMIT_WAIT))
            turn.waitingOn = [...turn.waitingOn, USAGE_LIMIT_WAIT];
          turn.typingAt = undefined;
          return;
        }
        turn.waitingOn = turn.waitingOn.filter((id) => id !== USAGE_LIMIT_WAIT);
        if (turn.waitingOn.length > 0 || turn.ended || turn.stage === 'rendering') return;
        turn.typingAt = at + typingEvery;
        l.actions.push({ kind: 'typing', route: turn.route });
        return;
      }
      case 'prompt_closed': {
        // The close names no turn; the turn that waits on it is the one to tell, and its card.
        const turn = [...l.turns.values()].find((t) => t.waitingOn.includes(frame.requestId));
        if (!turn) return;
        turn.waitingOn = turn.waitingOn.filter((id) => id !== frame.requestId);
        l.actions.push({ kind: 'card', route: turn.route, turnId: turn.id, frame });
        if (turn.waitingOn.length > 0 || turn.ended || turn.stage === 'rendering') return;
        turn.typingAt = at + typingEvery;
        l.actions.push({ kind: 'typing', route: turn.route });
        return;
      }
      default: {
        // Sub-agents outlive their turn: their frames still reach the card that holds them.
        const turnId = 'turnId' in frame ? frame.turnId : undefined;
        if (turnId === undefined) return;
        const route =
          l.turns.get(turnId)?.route ?? (frame.type.startsWith('subagent_') ? event.turn?.route : undefined);
        if (route) l.actions.push({ kind: 'card', route, turnId, frame });
      }
    }
  };

  const rendered = (turnId: string, ok: boolean): void => {
    const turn = l.turns.get(turnId);
    if (!turn) return;
    if (ok) l.writes.push({ kind: 'turn_rendered', turnId });
    l.turns.delete(turnId);
    if (l.lanes.get(laneKey(turn.route)) === turnId) l.lanes.delete(laneKey(turn.route));
    for (const entry of l.inbound.values()) {
      if (entry.turnId !== turnId) continue;
      // Its turn has answered (or given up): every message it read shows 👌.
      if (entry.placeholder === 'none' && entry.role !== 'unread') react(l, entry, 'read');
      entry.leaving = true;
      forget(l, entry);
    }
  };

  const tick = (at: number): void => {
    for (const entry of l.inbound.values())
      if (entry.waitUntil !== undefined && entry.waitUntil <= at) acknowledge(l, entry, at);
    for (const turn of l.turns.values()) {
      if (turn.typingAt === undefined || turn.typingAt > at) continue;
      turn.typingAt = at + typingEvery;
      l.actions.push({ kind: 'typing', route: turn.route });
    }
    if (l.sweepAt !== undefined && l.sweepAt <= at) {
      l.sweepAt = undefined;
      l.actions.push({ kind: 'sweep_markers' });
    }
  };

  const apply = (event: TurnEvent): void => {
    const at = event.at;
    switch (event.type) {
      case 'arrived': {
        l.connected = event.bridgeConnected;
        if (l.inbound.has(event.row.inboundId)) return;
        const entry = adoptInbound(l, event.row, event.presentation, at);
        const fresh = event.row.placeholderId === undefined;
        if (fresh) entry.ack = undefined;
        // Refused by today's budget before it was passed on: its marker says why, and nothing else is
        // shown for it (no "Thinking…" draft, no 👀 first).
        if (event.budget.admit === false) unread(l, [entry.id], event.budget.reason);
        else if (fresh) acknowledge(l, entry, at);
        return;
      }
      case 'bridge':
        l.connected = event.connected;
        if (l.connected)
          for (const entry of l.inbound.values())
            if (entry.waitUntil !== undefined) acknowledge(l, entry, at);
        return;
      case 'placeholder_sent':
      case 'placeholder_failed': {
        const entry = l.inbound.get(event.inboundId);
        if (entry?.placeholder === 'sending')
          placeholderEnded(entry, event.type === 'placeholder_sent' ? event.messageId : undefined);
        return;
      }
      case 'thought': {
        const entry = l.inbound.get(event.inboundId);
        if (entry) entry.thought = event.shown;
        return;
      }
      case 'frame':
        frameEvent(event);
        return;
      case 'refused':
        for (const row of event.inbound) adoptInbound(l, row, undefined, at);
        unread(l, event.inboundIds, event.reason);
        return;
      case 'rendered':
        rendered(event.turnId, event.ok);
        return;
      case 'marker':
        if (markerEnded(l, event.inboundId, event.text, event.outcome)) l.sweepAt ??= at + retryMs;
        return;
      case 'draft_stopped': {
        const turnId = l.lanes.get(laneKey(event.route));
        if (turnId !== undefined) l.actions.push({ kind: 'stop_drafts', turnId });
        return;
      }
      case 'due_markers':
        dueMarkers(l, event.rows, at);
        return;
      case 'resume':
        for (const row of event.turns) {
          if (l.turns.has(row.turnId)) continue;
          const ended = row.state === 'ended' ? { outcome: row.outcome, error: row.error } : undefined;
          const turn = addTurn(row, undefined, row.presentation, at, ended);
          open(turn, row.messageIds);
        }
        l.sweepAt = at;
        tick(at);
        return;
      case 'tick':
        tick(at);
        return;
    }
  };

  return {
    input(event) {
      l.writes = [];
      l.actions = [];
      // Deltas and ticks write nothing: no copy on the hot path.
      const writesNothing =
        event.type === 'tick' || (event.type === 'frame' && event.frame.type === 'text_delta');
      before = writesNothing ? undefined : snapshot(l);
      apply(event);
      return { writes: l.writes, actions: l.actions, wakeAt: nextWake(l) };
    },
    undo() {
      before?.();
      before = undefined;
    },
    readIn: (turnId) => [...l.inbound.values()].filter((m) => m.turnId === turnId).map((m) => m.id),
    holdsInbound: (id) => l.inbound.has(id),
    holdsTurn: (id) => l.turns.has(id),
    running: (route) => {
      const id = l.lanes.get(laneKey(route));
      return id !== undefined && l.turns.get(id)?.stage !== 'rendering' ? id : undefined;
    },
    live: () =>
      [...l.turns.values()]
        .filter((t) => t.stage !== 'rendering')
        .map((t) => ({ turnId: t.id, route: t.route })),
    size: () => l.inbound.size + l.turns.size,
  };
}
