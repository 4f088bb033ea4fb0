/**
 * The `pins` table: every message the gateway has pinned and not yet unpinned, so the boot sweep
 * (pins.ts, invariant I4) can unpin what a crash left behind before any new traffic.
 */
import type { Db } from './database.js';

/** An active pin: recorded before `pinChatMessage`, removed after unpin (or a failed pin). */
export interface PinRow {
  chatId: number;
  messageId: number;
  turnId: string;
  pinnedAt: number;
}

/** The active pins. */
export interface PinTable {
  addPin(pin: PinRow): void;
  removePin(chatId: number, messageId: number): void;
  listPins(): PinRow[];
}

/** The pin table over `db`. */
export function createPinTable(db: Db): PinTable {
  const q = {
    addPin: db.prepare(
      'INSERT OR REPLACE INTO pins (chat_id, message_id, turn_id, pinned_at) VALUES (?, ?, ?, ?)',
    ),
    removePin: db.prepare('DELETE FROM pins WHERE chat_id = ? AND message_id = ?'),
    pins: db.prepare<[], { chat_id: number; message_id: number; turn_id: string; pinned_at: number }>(
      'SELECT * FROM pins ORDER BY pinned_at',
    ),
  };
  return {
    addPin: (pin) => {
      q.addPin.run(pin.chatId, pin.messageId, pin.turnId, pin.pinnedAt);
    },
    removePin: (chatId, messageId) => {
      q.removePin.run(chatId, messageId);
    },
    listPins: () =>
      q.pins.all().map((r) => ({
        chatId: r.chat_id,
        messageId: r.message_id,
        turnId: r.turn_id,
        pinnedAt: r.pinned_at,
      })),
  };
}
