/**
 * The hold/release rules of delivery, as pure functions: which gateway commands are written into the
 * CLI now and which are kept (`held`, in the snapshot) until it is safe.
 *
 * - A `/clear` or `/compact` is held while a turn runs: the CLI would otherwise fold later messages into
 *   the running turn past the command. Everything after a held item is held too (order is kept).
 * - With `conversations: shared`, a message from another chat than the running turn's is held until that
 *   turn ends, instead of being steered into a turn that answers elsewhere.
 * - Held items are released in order, only into a process that reads, and not while a write a crash
 *   interrupted is being settled (they must not overtake it): a message whenever no command waits before
 *   it (it lands after the command, in its new conversation), a command only into an idle CLI.
 *
 * State: the held list (kept by the shell in the snapshot). Inputs: an arriving message or command, and
 * the CLI's state. Actions: hold, write, wait.
 */
import type { FrameOf, Route } from '@switchyard/protocol';

/** A gateway command the bridge accepted but has not written yet (kept in the snapshot's `held`). */
export type HeldFrame = FrameOf<'user_message'> | FrameOf<'clear'> | FrameOf<'compact'>;

/** What the hold rules look at when a message or command arrives. */
export interface Arrival {
  /** Something is held already. */
  holding: boolean;
  /** The running turn's route, if a turn runs. */
  turnRoute: Route | undefined;
  /** The session serves several chats (`conversations: shared`). */
  shared: boolean;
}

/** Whether a message from `route` is held rather than written now. */
export function holdsMessage(arrival: Arrival, route: Route): boolean {
  const turn = arrival.turnRoute;
  const otherChat =
    arrival.shared &&
    turn !== undefined &&
    (turn.chatId !== route.chatId || turn.threadId !== route.threadId);
  return arrival.holding || otherChat;
}

/** Whether a `/clear` or `/compact` is held rather than written now. */
export function holdsSlashCommand(arrival: Arrival): boolean {
  return arrival.holding || arrival.turnRoute !== undefined;
}

/** The CLI as the release rule sees it. */
export interface ReleaseView {
  /** A write from before a crash is being settled. */
  settling: boolean;
  /** A line written now reaches a live process. */
  writable: boolean;
  /** No turn runs (a command may go in). */
  idle: boolean;
}

/** What to do with the first held item: write it (`message`, `command`), or leave everything held. */
export function nextRelease(held: readonly HeldFrame[], view: ReleaseView): 'message' | 'command' | 'wait' {
  const head = held[0];
  if (head === undefined || view.settling || !view.writable) return 'wait';
  if (head.type === 'user_message') return 'message';
  return view.idle ? 'command' : 'wait';
}
