/**
 * The hold/release rules of delivery, as a pure machine in the shape of `card/src/cadence.ts`: events in
 * (stamped with the caller's time where time matters), the next state, the actions for `delivery.ts` to
 * perform and the time of its next wake-up out. Which gateway commands are written into the CLI now,
 * which are kept until it is safe, and how a write a crash interrupted is settled before anything held
 * overtakes it.
 *
 * - **Hold.** A `/clear` or `/compact` is held while a turn runs: the CLI would otherwise fold later
 *   messages into the running turn past the command. Everything after a held item is held too (order is
 *   kept). With `conversations: shared`, a message from another chat than the running turn's is held
 *   until that turn ends, instead of being steered into a turn that answers elsewhere. While the login's
 *   usage limit is waited out (`limited`), every message and command is held: written now, the CLI would
 *   send it into the same refusal.
 * - **Release.** Held items are released in order, only into a process that reads, and not while a write
 *   a crash interrupted is being settled (they must not overtake it): a message whenever no command waits
 *   before it (it lands after the command, in its new conversation), a command only into an idle CLI;
 *   nothing while the usage limit is waited out (the shell says the CLI is not writable then).
 *   Whatever is written makes the CLI busy, so at most one command goes per release.
 * - **Settle.** A write that was in progress when the last bridge died (the intent in the snapshot) is
 *   settled from stdout alone: read (its `queued` seen) → not written again; else a fence (`initialize`)
 *   is written, and a fence answered before any `queued` means the line never reached the fifo → written
 *   again; a fence not answered within {@link FENCE_TIMEOUT_MS} → written again all the same (the CLI
 *   drops a uuid it took). A control line (no uuid) is assumed written. The wake-up is the fence's
 *   deadline.
 *
 * State: the held list (the shell keeps it in the snapshot) and the settling write. Nothing here reads a
 * clock or does I/O.
 */
import type { AppFrame, FrameOf, Route } from '@switchyard/protocol/common';

/** A gateway command the bridge accepted but has not written yet (kept in the snapshot's `held`). */
export type HeldFrame = FrameOf<'user_message'> | FrameOf<'clear'> | FrameOf<'compact'>;

/**
 * How long a settle waits for the CLI to answer its fence. It answers `initialize` in ~10 ms while idle,
 * streaming or running a tool; past this the line is written anyway (the CLI drops a uuid it took).
 */
export const FENCE_TIMEOUT_MS = 10_000;

/** A write a crash interrupted, while it is being settled. */
export interface Settling {
  /** The line's uuid; `undefined` for a control line (assumed written). */
  readonly uuid: string | undefined;
  /** Stdout showed the CLI reading the line. */
  readonly queued: boolean;
  /** Set once the fence is written: the time past which the line is written again unanswered. */
  readonly fenceDeadline?: number;
}

/** What the hold rules keep. */
export interface HoldState {
  /** Items held, in order. */
  readonly held: readonly HeldFrame[];
  readonly settling: Settling | undefined;
}

/** Nothing held, nothing settling. */
export const EMPTY_HOLD: HoldState = { held: [], settling: undefined };

/** What happened. */
export type HoldEvent =
  /**
   * A message or a `/clear`, `/compact` arrived. `turnRoute`: the running turn's route, if a turn runs;
   * `shared`: the session serves several chats.
   */
  | {
      readonly kind: 'arrived';
      readonly frame: HeldFrame;
      readonly turnRoute: Route | undefined;
      readonly shared: boolean;
      /** The usage limit is being waited out (absent: not). */
      readonly limited?: boolean;
    }
  /**
   * The CLI may take input: `writable` (a live process reads the fifo, and no usage limit is being
   * waited out), `idle` (no turn runs).
   */
  | { readonly kind: 'release'; readonly writable: boolean; readonly idle: boolean }
  /** Messages the last process never took, for the next one: ahead of everything held. */
  | { readonly kind: 'kept_first'; readonly messages: readonly FrameOf<'user_message'>[] }
  /** No process will take what is held (it exited and none follows). */
  | { readonly kind: 'drop' }
  /** A bridge started with a write in progress: `read` when stdout had shown it read already. */
  | { readonly kind: 'settle_begun'; readonly uuid: string | undefined; readonly read: boolean }
  /** Stdout showed the CLI reading the line with this uuid (decided at the next `settle` or `tick`). */
  | { readonly kind: 'queued'; readonly uuid: string }
  /** Settle now, at `at`; `alive`: a process is there to ask. */
  | { readonly kind: 'settle'; readonly at: number; readonly alive: boolean }
  /** A look while the fence is out: whether the process is still there and the fence is answered. */
  | { readonly kind: 'tick'; readonly at: number; readonly alive: boolean; readonly answered: boolean };

/** What the shell performs, in order. */
export type HoldAction =
  /** Keep `frame` (durably, before the gateway's acknowledgement). */
  | { readonly kind: 'hold'; readonly frame: HeldFrame }
  /** Write the arriving frame now. */
  | { readonly kind: 'write'; readonly frame: HeldFrame }
  /** Write a held frame now; `rest` is what stays held (taken off the list before the write). */
  | { readonly kind: 'release'; readonly frame: HeldFrame; readonly rest: readonly HeldFrame[] }
  /** Report these as not done: messages unread, commands failed. */
  | { readonly kind: 'dropped'; readonly frames: readonly HeldFrame[] }
  /** Write the fence (an `initialize`): its answer, or a `queued` before it, says whether the line was read. */
  | { readonly kind: 'write_fence' }
  /** The interrupted write is settled: write its line again (`rewrite`) or not, and clear it. */
  | { readonly kind: 'settled'; readonly rewrite: boolean; readonly why: SettleReason };

/** Why a settle ended as it did, for the log. */
export type SettleReason = 'read' | 'fence_answered' | 'fence_timeout' | 'no_process' | 'control_line';

/** One step: the next state, the actions in order, and when to look again (the fence's deadline). */
export interface HoldStep {
  readonly state: HoldState;
  readonly actions: readonly HoldAction[];
  readonly wakeAt: number | undefined;
}

/** Applies one event. */
export function holdStep(state: HoldState, event: HoldEvent): HoldStep {
  const actions: HoldAction[] = [];
  let next = state;
  switch (event.kind) {
    case 'arrived': {
      if (holds(state, event)) {
        actions.push({ kind: 'hold', frame: event.frame });
        next = { ...state, held: [...state.held, event.frame] };
      } else {
        actions.push({ kind: 'write', frame: event.frame });
      }
      break;
    }
    case 'release': {
      if (state.settling !== undefined || !event.writable) break;
      let idle = event.idle;
      let held = state.held;
      for (let head = held[0]; head !== undefined; head = held[0]) {
        if (head.type !== 'user_message' && !idle) break;
        held = held.slice(1);
        actions.push({ kind: 'release', frame: head, rest: held });
        // Whatever goes in makes the CLI busy: a command after it waits for the next release.
        idle = false;
      }
      if (held !== state.held) next = { ...state, held };
      break;
    }
    case 'kept_first':
      if (event.messages.length > 0) next = { ...state, held: [...event.messages, ...state.held] };
      break;
    case 'drop':
      if (state.held.length > 0) {
        actions.push({ kind: 'dropped', frames: state.held });
        next = { ...state, held: [] };
      }
      break;
    case 'settle_begun':
      next = { ...state, settling: { uuid: event.uuid, queued: event.read } };
      break;
    case 'queued': {
      // Noted only: stdout is being read right now, and the settle is decided at the next look (`tick`).
      const settling = state.settling;
      if (settling === undefined || settling.uuid !== event.uuid) break;
      next = { ...state, settling: { ...settling, queued: true } };
      break;
    }
    case 'settle': {
      const settling = state.settling;
      if (settling === undefined) break;
      const why: SettleReason | undefined =
        settling.uuid === undefined
          ? 'control_line'
          : settling.queued
            ? 'read'
            : !event.alive
              ? 'no_process'
              : undefined;
      if (why !== undefined) {
        actions.push({ kind: 'settled', rewrite: false, why });
        next = { ...state, settling: undefined };
      } else if (settling.fenceDeadline === undefined) {
        actions.push({ kind: 'write_fence' });
        next = { ...state, settling: { ...settling, fenceDeadline: event.at + FENCE_TIMEOUT_MS } };
      }
      break;
    }
    case 'tick': {
      const settling = state.settling;
      if (settling?.fenceDeadline === undefined) break;
      const outcome: { rewrite: boolean; why: SettleReason } | undefined = settling.queued
        ? { rewrite: false, why: 'read' }
        : !event.alive
          ? { rewrite: false, why: 'no_process' }
          : event.answered
            ? { rewrite: true, why: 'fence_answered' }
            : event.at >= settling.fenceDeadline
              ? { rewrite: true, why: 'fence_timeout' }
              : undefined;
      if (outcome) {
        actions.push({ kind: 'settled', ...outcome });
        next = { ...state, settling: undefined };
      }
      break;
    }
    default:
      return event satisfies never;
  }
  return { state: next, actions, wakeAt: next.settling?.fenceDeadline };
}

/** Whether an arriving message or command is held rather than written now. */
function holds(state: HoldState, arrival: Extract<HoldEvent, { kind: 'arrived' }>): boolean {
  if (state.held.length > 0 || arrival.limited === true) return true;
  const turn = arrival.turnRoute;
  if (arrival.frame.type !== 'user_message') return turn !== undefined;
  const route = arrival.frame.route;
  return (
    arrival.shared && turn !== undefined && (turn.chatId !== route.chatId || turn.threadId !== route.threadId)
  );
}

/** What a drop reports: the held messages as unread, each held command as failed, with `reason`. */
export function droppedFrames(held: readonly HeldFrame[], reason: string): AppFrame[] {
  const unread = held.flatMap((frame) => (frame.type === 'user_message' ? [frame.inboundId] : []));
  return [
    ...(unread.length > 0 ? [{ type: 'messages_unread' as const, inboundIds: unread, reason }] : []),
    ...held.flatMap((frame) =>
      frame.type === 'user_message'
        ? []
        : [
            {
              type: 'command_result' as const,
              commandId: frame.commandId,
              ok: false,
              message: `/${frame.type} did not run: ${reason}`,
            },
          ],
    ),
  ];
}
