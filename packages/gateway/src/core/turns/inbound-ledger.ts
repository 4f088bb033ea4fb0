/**
 * The turn machine's rules for inbound messages in flight (`turn-machine.ts` has the turns'):
 * how each is acknowledged, the reaction that shows its state (`reaction.ts`), and — for a message
 * that has a marker message (the words of one not read, or one sent by a previous version) — the text
 * that marker must reach.
 *
 * Invariants:
 * - A message is acknowledged once (`arrival.ts`, after a silent wait within the start-up grace), as
 *   its turn's reply will be presented — decided when it came in (`core/reply/presentation.ts`) and
 *   held on its entry (`reply`): a draft reply's message gets a "Thinking…" draft, any other a reaction.
 * - A state is shown where the message shows states: an edit of its marker message if it has one, else
 *   a reaction; a reaction is asked for only when the state changes.
 * - A due marker text is written (`marker_due`) before its edit is asked for, and cleared
 *   (`marker_shown`) only on an outcome that says Telegram shows it (or never will change it).
 * - At most one edit per marker is in flight; a text that became due meanwhile follows when it ends.
 * - An entry leaves once `leaving` (its turn rendered, or it is unread) and nothing of it is in flight.
 */

import { laneKey } from '../intake/route.js';
import type { ReplyPresentation } from '../reply/presentation.js';
import { arrival } from './arrival.js';
import { PLACEHOLDER, unreadText, waitingText } from './marker-text.js';
import type { ReactionState } from './reaction.js';
import type { Inbound, Ledger } from './turn-state.js';
import type { StoredInbound } from './turn-steps.js';

/** The entry of a stored message the machine does not hold yet (it came in before a restart). */
export function adoptInbound(
  l: Ledger,
  row: StoredInbound,
  reply: ReplyPresentation | undefined,
  at: number,
): Inbound {
  const known = l.inbound.get(row.inboundId);
  if (known) return known;
  const read = row.state === 'taken' ? 'taken' : row.state === 'unread' ? 'unread' : undefined;
  const entry: Inbound = {
    id: row.inboundId,
    route: row.route,
    telegramMessageId: row.telegramMessageId,
    // A stored message was acknowledged already: by its marker message, or (none) as its draft reply.
    ack: row.placeholderId === undefined && reply === 'draft' ? 'draft' : 'placeholder',
    waitUntil: undefined,
    arrivedAt: at,
    reply,
    placeholder: row.placeholderId ?? 'none',
    kind: row.placeholderKind,
    shown: undefined,
    due: row.placeholderDue,
    editing: undefined,
    reaction: undefined,
    thought: false,
    role: read,
    turnId: undefined,
    leaving: read !== undefined,
  };
  l.inbound.set(entry.id, entry);
  return entry;
}

/**
 * Decides how a message not yet acknowledged is (`arrival.ts`): wait, a draft, or a placeholder.
 */
export function acknowledge(l: Ledger, entry: Inbound, at: number): void {
  const decision = arrival({
    bridgeConnected: l.connected,
    waitedMs: at - entry.arrivedAt,
    graceMs: l.graceMs,
    laneBusy: l.lanes.has(laneKey(entry.route)),
    openedTurn: entry.role === 'opener' || entry.role === 'merged',
    drafts: entry.reply === 'draft',
  });
  if (decision.kind === 'wait') {
    entry.waitUntil = at + decision.ms;
    return;
  }
  entry.waitUntil = undefined;
  if (decision.kind === 'draft') {
    entry.ack = 'draft';
    if (decision.thinking)
      l.actions.push({
        kind: 'thinking',
        inboundId: entry.id,
        route: entry.route,
        draftId: entry.telegramMessageId,
      });
    return;
  }
  entry.ack = 'reaction';
  // Read while it waited for the bridge: its turn's state was asked for already.
  if (decision.waiting && entry.role === undefined) react(l, entry, 'waiting');
}

/** Shows `state` on the message as a reaction, if that is not what it shows already. */
export function react(l: Ledger, entry: Inbound, state: ReactionState): void {
  if (entry.reaction === state) return;
  entry.reaction = state;
  l.actions.push({
    kind: 'react',
    inboundId: entry.id,
    route: entry.route,
    messageId: entry.telegramMessageId,
    state,
  });
}

/**
 * The message reached a state: its marker message (if it has one) is to say `text`, else its reaction
 * shows `state` (a message acknowledged with a reaction, or not acknowledged yet, has no marker).
 */
export function mark(l: Ledger, entry: Inbound, kind: string, text: string, state: ReactionState): void {
  if (entry.placeholder === 'none') react(l, entry, state);
  else owe(l, entry, kind, text);
}

/** Presents the message with a placeholder message saying `text`: its send is asked for. */
function sendMarker(l: Ledger, entry: Inbound, text: string): void {
  entry.waitUntil = undefined;
  entry.ack = 'placeholder';
  entry.placeholder = 'sending';
  entry.shown = text;
  l.actions.push({
    kind: 'send_placeholder',
    inboundId: entry.id,
    route: entry.route,
    replyTo: entry.telegramMessageId,
    text,
    placeholderKind: entry.kind ?? 'reply',
  });
}

/** The marker is to say `text` from now (durably); the edit is asked for as soon as it can be. */
export function owe(l: Ledger, entry: Inbound, kind: string, text: string): void {
  entry.kind = kind;
  entry.due = text;
  l.writes.push({ kind: 'marker_due', inboundId: entry.id, placeholderKind: kind, text });
  flush(l, entry);
}

/** Asks for the due edit, if the placeholder exists and no edit of it is in flight. */
export function flush(l: Ledger, entry: Inbound): void {
  if (typeof entry.placeholder !== 'number' || entry.editing !== undefined || entry.due === undefined) return;
  if (entry.due === entry.shown) {
    l.writes.push({ kind: 'marker_shown', inboundId: entry.id, text: entry.due });
    entry.due = undefined;
    return;
  }
  entry.editing = entry.due;
  l.actions.push({
    kind: 'edit_marker',
    inboundId: entry.id,
    chatId: entry.route.chatId,
    messageId: entry.placeholder,
    text: entry.due,
    due: true,
  });
}

/**
 * The message opened its turn: its placeholder, if it said something else (a steer, "queued"), is
 * reset to "…" once, and its text belongs to the turn's reply from then on (nothing stays due).
 */
export function becomeReply(l: Ledger, entry: Inbound): void {
  if (entry.ack !== 'placeholder') return;
  const wasReply = entry.kind === 'reply' || entry.kind === undefined;
  if (!wasReply) {
    entry.kind = 'reply';
    entry.due = undefined;
    l.writes.push({ kind: 'marker_due', inboundId: entry.id, placeholderKind: 'reply', text: undefined });
  }
  const stale = !wasReply || (entry.shown !== undefined && entry.shown !== PLACEHOLDER.reply);
  if (!stale || typeof entry.placeholder !== 'number') return;
  entry.shown = PLACEHOLDER.reply;
  l.actions.push({
    kind: 'edit_marker',
    inboundId: entry.id,
    chatId: entry.route.chatId,
    messageId: entry.placeholder,
    text: PLACEHOLDER.reply,
    due: false,
  });
}

/** Drops the entry if it is leaving and nothing of it is in flight. */
export function forget(l: Ledger, entry: Inbound): void {
  if (entry.leaving && entry.placeholder !== 'sending' && entry.editing === undefined)
    l.inbound.delete(entry.id);
}

/**
 * A marker edit ended. `failed`: still due in the store, and the next sweep tries it (not at once:
 * Telegram may be refusing for a while); returns whether a sweep is needed.
 */
export function markerEnded(
  l: Ledger,
  inboundId: string,
  text: string,
  outcome: 'shown' | 'gone' | 'failed',
): boolean {
  const entry = l.inbound.get(inboundId);
  if (!entry || entry.editing !== text) return false;
  entry.editing = undefined;
  const failed = outcome === 'failed';
  if (!failed) {
    entry.shown = text;
    l.writes.push({ kind: 'marker_shown', inboundId, text });
    if (entry.due === text) entry.due = undefined;
  }
  if (!failed || entry.due !== text) flush(l, entry);
  forget(l, entry);
  return failed;
}

/** The store's due markers (a sweep): each is edited, the ones not held as entries that leave after. */
export function dueMarkers(l: Ledger, rows: readonly StoredInbound[], at: number): void {
  for (const row of rows) {
    const held = l.inbound.has(row.inboundId);
    const entry = adoptInbound(l, row, undefined, at);
    if (!held) entry.leaving = true;
    if (typeof entry.placeholder !== 'number' && row.placeholderId !== undefined)
      entry.placeholder = row.placeholderId;
    entry.due = row.placeholderDue;
    entry.shown = undefined; // unknown after a failure or a restart: edit it
    flush(l, entry);
    forget(l, entry);
  }
}

/**
 * The bridge reports steers taken into turn `turnId` (`message_taken`). A message already read (it
 * opened a turn, was read with one, or was taken before) keeps its marker; `running` says whether the
 * turn is one the machine follows (if not, the entry leaves once its marker is edited).
 */
export function taken(
  l: Ledger,
  ids: readonly string[],
  turnId: string,
  running: (turnId: string) => boolean,
  at: number,
): void {
  for (const id of ids) {
    const entry = l.inbound.get(id);
    if (!entry || entry.role !== undefined) continue;
    entry.role = 'taken';
    entry.turnId = turnId;
    entry.leaving = !running(turnId);
    l.writes.push({ kind: 'inbound_state', inboundIds: [id], state: 'taken' });
    mark(l, entry, 'taken', PLACEHOLDER.taken, 'reading');
    if (entry.ack === undefined) acknowledge(l, entry, at);
    forget(l, entry);
  }
}

/** Messages waiting for a free session (`session_waiting`); ones already read keep their marker. */
export function waiting(l: Ledger, ids: readonly string[], position: number): void {
  for (const id of ids) {
    const entry = l.inbound.get(id);
    if (entry && entry.role === undefined) mark(l, entry, 'waiting', waitingText(position), 'waiting');
  }
}

/**
 * Messages the agent will never read (`messages_unread`): their marker says so, and they leave. No reply
 * will be presented for one, so one acknowledged as a draft (a rich private chat), or not acknowledged
 * yet, gets a marker message all the same: it is the only place its chat can read why (a budget spent,
 * a conversation that failed) — a draft would say nothing, and vanish.
 */
export function unread(l: Ledger, ids: readonly string[], reason: string): void {
  l.writes.push({ kind: 'inbound_state', inboundIds: ids, state: 'unread' });
  for (const id of ids) {
    const entry = l.inbound.get(id);
    if (!entry) continue;
    entry.role = 'unread';
    entry.leaving = true;
    const text = unreadText(reason);
    owe(l, entry, 'unread', text);
    if (entry.ack !== 'placeholder') sendMarker(l, entry, text);
    forget(l, entry);
  }
}
