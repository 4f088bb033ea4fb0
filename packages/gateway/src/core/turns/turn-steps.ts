/**
 * The vocabulary of the turn machine (`turn-machine.ts`): its handle and options, the events it is
 * fed, the store writes and actions it returns, and the stored rows it reads. Structural types only, so
 * the store's rows (`InboundRow`, `TurnRow`) fit them without the core importing the store.
 */
import type { Route } from '@switchyard/protocol/common';
import type { FramesOf } from '../bridge/frame-owner.js';
import type { ReplyPresentation } from '../reply/presentation.js';
import type { ReactionState } from './reaction.js';

/** An inbound message as the store keeps it (the fields the machine reads). */
export interface StoredInbound {
  inboundId: string;
  route: Route;
  telegramMessageId: number;
  state: string;
  placeholderId: number | undefined;
  placeholderKind: string | undefined;
  placeholderDue: string | undefined;
}

/** A turn as the store keeps it (the fields the machine reads). */
export interface StoredTurn {
  turnId: string;
  route: Route;
  state: 'running' | 'ended' | 'rendered';
  blocks: { id: string; text: string }[];
  messageIds: number[];
  outcome: string | undefined;
  error: string | undefined;
}

/** A turn a previous process left, with its reply's presentation decided as the machine meets it. */
export type ResumedTurn = StoredTurn & { presentation: ReplyPresentation };

/** The bridge frames the machine reads: the turns' and the prompts' (the card shows a prompt's wait). */
export type TurnFrame = FramesOf<'turn' | 'prompt'>;

/** How a marker edit ended: Telegram shows it, it can never change again (`gone`), or it must be retried. */
export type MarkerOutcome = 'shown' | 'gone' | 'failed';

/**
 * Today's budget's verdict on a message about to start a turn, asked before the machine takes it
 * (`io/spend/spend-ledger.ts`): admitted, held until a running turn ends (acknowledged as if admitted),
 * or refused — the machine's own `arrived` step then marks it unread with `reason`.
 */
export type BudgetVerdict = { admit: true | 'hold' } | { admit: false; reason: string };

/** One input of the machine; `at` is the caller's clock (ms). */
export type TurnEvent = { at: number } & (
  | {
      type: 'arrived';
      row: StoredInbound;
      /** How its turn's reply is presented, decided as it comes in (`core/reply/presentation.ts`). */
      presentation: ReplyPresentation;
      /** The budget's verdict, asked before the machine takes the message: a refused one is marked here. */
      budget: BudgetVerdict;
      bridgeConnected: boolean;
    }
  | { type: 'bridge'; connected: boolean }
  /** The placeholder's send ended with its id; fed inside the transaction that ends the send. */
  | { type: 'placeholder_sent'; inboundId: string; messageId: number }
  | { type: 'placeholder_failed'; inboundId: string }
  /**
   * Whether the "Thinking…" draft the machine asked for went out (false: the chat's draft bucket was empty).
   */
  | { type: 'thought'; inboundId: string; shown: boolean }
  | {
      type: 'frame';
      frame: TurnFrame;
      /** Rows of the inbound messages the frame names that the machine does not hold. */
      inbound: readonly StoredInbound[];
      /** The stored row of the frame's turn, when the machine does not hold that turn. */
      turn: StoredTurn | undefined;
      /**
       * How a reply in the frame's conversation is presented, decided now: for the messages and the turn
       * the machine meets here for the first time (a turn that opens with no message it holds).
       */
      presentation: ReplyPresentation;
    }
  /**
   * Messages the gateway itself will not pass on after the machine took them — the channel or the
   * bridge would not take their frame, or today's budget refused one it had held (or one the boot
   * re-sends): marked unread with `reason`, as the bridge's `messages_unread` marks them. `inbound`:
   * the rows of those the machine does not hold (a boot's re-send).
   */
  | { type: 'refused'; inboundIds: readonly string[]; reason: string; inbound: readonly StoredInbound[] }
  /** A finish the machine asked for is done: rendered (`ok`) or given up (left for the next boot). */
  | { type: 'rendered'; turnId: string; ok: boolean }
  | { type: 'marker'; inboundId: string; text: string; outcome: MarkerOutcome }
  | { type: 'draft_stopped'; route: Route }
  /** The markers the store still holds due (the answer to a `sweep_markers` action). */
  | { type: 'due_markers'; rows: readonly StoredInbound[] }
  /** Boot: the turns a previous process left running or ended but not rendered. */
  | { type: 'resume'; turns: readonly ResumedTurn[] }
  | { type: 'tick' }
);

/** A store write; the shell applies a step's writes in one transaction, before any of its actions. */
export type StoreWrite =
  | { kind: 'turn'; turnId: string; route: Route; request: string; startedAt: number }
  | { kind: 'inbound_state'; inboundIds: readonly string[]; state: 'taken' | 'unread' }
  | { kind: 'turn_messages'; turnId: string; messageIds: readonly number[] }
  | { kind: 'placeholder'; inboundId: string; messageId: number; placeholderKind: string }
  /** The marker is to say `text` (`undefined`: the turn's reply owns it), kept until Telegram confirms. */
  | { kind: 'marker_due'; inboundId: string; placeholderKind: string; text: string | undefined }
  | { kind: 'marker_shown'; inboundId: string; text: string }
  | { kind: 'turn_block'; turnId: string; blockId: string; text: string }
  | { kind: 'turn_ended'; turnId: string; outcome: string; error: string | undefined; costUsd?: number }
  | { kind: 'turn_rendered'; turnId: string };

/** Something the shell does; the Telegram ones report back as events where named. */
export type TurnAction =
  /** Send the placeholder message; report `placeholder_sent` (inside the send's transaction) or `_failed`. */
  | {
      kind: 'send_placeholder';
      inboundId: string;
      route: Route;
      replyTo: number;
      text: string;
      placeholderKind: string;
    }
  /**
   * Show the message's state as a reaction on it (or, where the chat refuses reactions, in its
   * conversation's one marker message); cosmetic: nothing reports back.
   */
  | { kind: 'react'; inboundId: string; route: Route; messageId: number; state: ReactionState }
  /** "Thinking…" as a draft under `draftId`; report `thought`. */
  | { kind: 'thinking'; inboundId: string; route: Route; draftId: number }
  /**
   * Edit a marker; `due` edits report `marker`, the one-off "…" of a placeholder becoming a reply does not.
   */
  | { kind: 'edit_marker'; inboundId: string; chatId: number; messageId: number; text: string; due: boolean }
  /** Hold the turn's reply text from now (starting from `blocks`), until its finish is reported. */
  | { kind: 'track'; turnId: string; blocks: readonly { id: string; text: string }[] }
  /** Build the turn's reply over `messageIds` (`Replies.stream`); `thinking`: show "Thinking…" first. */
  | {
      kind: 'open';
      turnId: string;
      route: Route;
      messageIds: readonly number[];
      /** How the reply is presented: decided when its opening message came in, carried here. */
      presentation: ReplyPresentation;
      opener: number | undefined;
      thinking: boolean;
    }
  | { kind: 'show'; turnId: string }
  /** The final render; report `rendered`. */
  | { kind: 'finish'; turnId: string; route: Route; outcome: string | undefined; error: string | undefined }
  | { kind: 'stop_drafts'; turnId: string }
  /** The typing action, renewed while the turn runs; it lapses by itself once not renewed. */
  | { kind: 'typing'; route: Route }
  | { kind: 'card'; route: Route; turnId: string; frame: TurnFrame }
  /** Read the markers the store holds due and feed them back as `due_markers`. */
  | { kind: 'sweep_markers' };

/** What one event produced. */
export interface TurnStep {
  readonly writes: readonly StoreWrite[];
  readonly actions: readonly TurnAction[];
  /** When to feed the next `tick` (same clock as the events), or undefined when nothing waits. */
  readonly wakeAt: number | undefined;
}

/** Timing of the machine. */
export interface TurnMachineOptions {
  /** The start-up grace; default `BRIDGE_GRACE_MS` (`arrival.ts`). */
  graceMs?: number;
  /** How often the typing action is renewed; default 4500 ms (Telegram shows it for 5 s). */
  typingEveryMs?: number;
  /** How long after a failed marker edit the store's due markers are swept again; default 15 s. */
  retryMs?: number;
}

/** The machine's handle. */
export interface TurnMachine {
  input(event: TurnEvent): TurnStep;
  /**
   * Undoes the last `input`: its writes could not be applied (the store refused them), so the machine
   * must not act as if they were. Only the last input can be undone.
   */
  undo(): void;
  /** Whether the machine holds this inbound message / this turn (else the shell passes its stored row). */
  holdsInbound(inboundId: string): boolean;
  holdsTurn(turnId: string): boolean;
  /** The turn running in a lane, if any. */
  running(route: { chatId: number; threadId?: number | undefined }): string | undefined;
  /** The inbound ids a turn opened with, read together or took in (held until it is rendered). */
  readIn(turnId: string): string[];
  /** The turns not yet rendering, oldest first. */
  live(): { turnId: string; route: StoredTurn['route'] }[];
  /** Entries held: inbound messages plus turns. Zero once everything is rendered. */
  size(): number;
}
