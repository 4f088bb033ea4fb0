/**
 * A conversation's snapshot as its parts may change it: the narrow ports through which the supervisor
 * (the process record, exits, the crash-loop flag) and delivery (delivered keys, the intent, held items)
 * ask `Conversation` — the snapshot's only writer, which persists it — for each change.
 */
import { DELIVERED_KEPT, type DeliveryRecordPort } from '../delivery/delivery.js';
import type { ProcessRecordPort } from '../process/supervisor-ports.js';
import type { Snapshot } from './snapshot.js';

/** The supervisor's port on a conversation's snapshot (`snapshot` gives the live one). */
export function processRecordOf(snapshot: () => Snapshot): ProcessRecordPort {
  return {
    get child() {
      return snapshot().child;
    },
    get exits() {
      return snapshot().exits;
    },
    get crashLoop() {
      return snapshot().crashLoop === true;
    },
    started(record) {
      snapshot().child = record;
      snapshot().stdoutOffset = 0;
    },
    exited(exits, crashLoop) {
      delete snapshot().child;
      snapshot().exits = [...exits];
      if (crashLoop) snapshot().crashLoop = true;
    },
    retry() {
      snapshot().crashLoop = false;
      snapshot().exits = [];
    },
    forget() {
      delete snapshot().child;
    },
  };
}

/** Delivery's port on a conversation's snapshot (`snapshot` gives the live one). */
export function deliveryRecordOf(snapshot: () => Snapshot): DeliveryRecordPort {
  return {
    delivered: (key) => snapshot().delivered.includes(key),
    remember(key) {
      const delivered = snapshot().delivered;
      // Once: a held item is remembered when held, and its release takes the same write path again.
      if (delivered.includes(key)) return;
      delivered.push(key);
      if (delivered.length > DELIVERED_KEPT) delivered.splice(0, delivered.length - DELIVERED_KEPT);
    },
    forget(key) {
      const delivered = snapshot().delivered;
      const at = delivered.lastIndexOf(key);
      if (at >= 0) delivered.splice(at, 1);
    },
    get intent() {
      return snapshot().intent;
    },
    setIntent(intent) {
      if (intent) snapshot().intent = intent;
      else delete snapshot().intent;
    },
    markIntentRead() {
      const intent = snapshot().intent;
      if (intent) intent.read = true;
    },
    get held() {
      return snapshot().held ?? [];
    },
    setHeld(held) {
      if (held.length > 0) snapshot().held = [...held];
      else delete snapshot().held;
    },
  };
}
