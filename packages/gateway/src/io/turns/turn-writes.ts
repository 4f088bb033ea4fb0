/**
 * How the turn machine's store writes land in SQLite: one table method each. The shell applies a step's
 * writes in one transaction (`turns.ts`) before any Telegram call of that step, so what a step decided
 * is durable before anything of it shows in a chat.
 */
import type { StoreWrite } from '../../core/turns/turn-steps.js';
import type { GatewayStore } from '../../store/store.js';

/** Applies one write of a step; the caller holds the transaction. */
export function writeTurnStep(store: GatewayStore, w: StoreWrite): void {
  switch (w.kind) {
    case 'turn':
      store.upsertTurn({ turnId: w.turnId, route: w.route, request: w.request, startedAt: w.startedAt });
      return;
    case 'inbound_state':
      store.setInboundState(w.inboundIds, w.state);
      return;
    case 'turn_messages':
      store.setTurnMessages(w.turnId, w.messageIds);
      return;
    case 'placeholder':
      store.setPlaceholder(w.inboundId, w.messageId, w.placeholderKind);
      return;
    case 'marker_due':
      store.placeholderDue(w.inboundId, w.placeholderKind, w.text);
      return;
    case 'marker_shown':
      store.placeholderShown(w.inboundId, w.text);
      return;
    case 'turn_block':
      store.setTurnBlock(w.turnId, w.blockId, w.text);
      return;
    case 'turn_ended':
      store.endTurn(w.turnId, w.outcome, w.error, w.costUsd);
      return;
    case 'turn_rendered':
      store.markTurnRendered(w.turnId);
      return;
  }
}
