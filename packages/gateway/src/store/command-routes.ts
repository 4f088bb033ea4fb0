/**
 * The `command_routes` table: the chat each command sent to the bridge answers to, until its
 * `command_result` arrives (commands.ts), so an answer after a gateway restart still finds its chat.
 * Routes never answered are forgotten after a day.
 */
import type { Route } from '@switchyard/protocol';
import { type Db, storedRoute } from './database.js';

/** Commands waiting for the bridge's `command_result`. */
export interface CommandRoutes {
  addCommandRoute(commandId: string, route: Route): void;
  /** The chat a command answers to, removed as it is read; undefined when unknown (or taken already). */
  takeCommandRoute(commandId: string): Route | undefined;
}

/** The command routes over `db` (old ones are forgotten by `retention.ts`). */
export function createCommandRoutes(db: Db, now: () => number): CommandRoutes {
  const q = {
    addRoute: db.prepare(
      'INSERT OR REPLACE INTO command_routes (command_id, chat_id, thread_id, created_at) VALUES (?, ?, ?, ?)',
    ),
    route: db.prepare<[string], { chat_id: number; thread_id: number | null }>(
      'SELECT chat_id, thread_id FROM command_routes WHERE command_id = ?',
    ),
    dropRoute: db.prepare('DELETE FROM command_routes WHERE command_id = ?'),
  };

  return {
    addCommandRoute: (commandId, r) => {
      q.addRoute.run(commandId, r.chatId, r.threadId ?? null, now());
    },
    takeCommandRoute: db.transaction((commandId: string): Route | undefined => {
      const row = q.route.get(commandId);
      if (!row) return undefined;
      q.dropRoute.run(commandId);
      return storedRoute(row.chat_id, row.thread_id);
    }),
  };
}
