/**
 * State written by the single-session bridge (protocol 1) becomes a conversation on first start: its
 * session is the conversation of the chat it last served. What moves, from the state directory into
 * `conversations/<dir>/`: `bridge.json`, the stdin fifo and both logs. A live process keeps running
 * through the move — it holds its fifo and logs open, and a rename keeps the inode — and is adopted as
 * that conversation's. The outbox stays where it is (it is the channel's, shared by all conversations);
 * its source tags, recorded without a conversation, are given to this one.
 *
 * A session that never served a chat has nothing to keep: its process (the old bridge started one at
 * once) is stopped and its files removed.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger, Route } from '@switchyard/protocol';
import { STDERR_LOG, STDIN_FIFO, STDOUT_LOG } from './child.js';
import type { FileChannelStore } from './outbox.js';
import { readSnapshot, SNAPSHOT_FILE } from './snapshot.js';
import { stopRecordedClaude } from './stop.js';

/** The files of one session that live in its directory. */
const SESSION_FILES = [SNAPSHOT_FILE, STDIN_FIFO, STDOUT_LOG, STDERR_LOG] as const;

/** Where the bridge keeps a conversation: a pure naming rule (see `bridge.ts`). */
export interface ConversationPlacement {
  /** The conversation a route belongs to. */
  keyOf(route: Route): string;
  /** The directory of a conversation. */
  dirOf(key: string): string;
}

/**
 * Moves a single-session state directory's session into its conversation, if there is one to move.
 * Returns the key it became, or `undefined` when there was nothing to migrate.
 */
export async function migrateSingleSession(
  stateDir: string,
  store: Pick<FileChannelStore, 'renameConversation'>,
  placement: ConversationPlacement,
  log: Logger,
): Promise<string | undefined> {
  const legacy = join(stateDir, SNAPSHOT_FILE);
  if (!existsSync(legacy)) return undefined;
  const snapshot = readSnapshot(legacy);
  const route = snapshot?.session.turn?.route ?? snapshot?.session.lastRoute;
  if (!snapshot || !route) {
    const stopped = await stopRecordedClaude({ stateDir, logger: log });
    if (stopped === 'unknown') {
      throw new Error(
        `cannot tell whether the Claude process recorded in ${legacy} is alive; stop it, then remove that file`,
      );
    }
    for (const name of SESSION_FILES) rmSync(join(stateDir, name), { force: true });
    log.info({ stopped }, 'removed the state of a single session that never served a chat');
    return undefined;
  }
  const key = placement.keyOf(route);
  const dir = placement.dirOf(key);
  if (existsSync(join(dir, SNAPSHOT_FILE))) {
    throw new Error(
      `both ${legacy} (a bridge from before conversations) and ${join(dir, SNAPSHOT_FILE)} exist; keep one`,
    );
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The outbox's tags first, the snapshot last: a crash in between leaves the legacy snapshot in place,
  // and the next start finishes the move (the tags, already given, are not given twice).
  store.renameConversation('', key);
  for (const name of [STDIN_FIFO, STDOUT_LOG, STDERR_LOG, SNAPSHOT_FILE]) {
    const from = join(stateDir, name);
    if (existsSync(from)) renameSync(from, join(dir, name));
  }
  log.info(
    { conversation: key, pid: snapshot.child?.pid },
    'migrated the single session to its conversation',
  );
  return key;
}
