/**
 * The bridge-frame dispatch: every frame the agent's bridge sends, routed to the module that owns it —
 * turn and text events to the turns (and through them the card), prompts to the prompts and the turns
 * (the card shows the wait), command results and status to the command runner. Who owns which frame is
 * the table in `core/bridge/frame-owner.ts`; the switch here is exhaustive over its owners.
 */
import {
  type AppFrame,
  assertNever,
  type FrameOf,
  type Logger,
  type Route,
  type TransferPeer,
} from '@switchyard/protocol';
import { ownerOf, readBySpend } from '../../core/bridge/frame-owner.js';
import type { Schedules } from '../automation/schedules.js';
import type { CommandRunner } from '../commands/commands.js';
import type { TerminalCommands } from '../commands/terminal-commands.js';
import type { Prompts } from '../prompts/prompts.js';
import type { FileSender } from '../reply/files.js';
import type { SpendLedger } from '../spend/spend-ledger.js';
import type { TurnNotices } from '../turns/turn-notices.js';
import type { Turns } from '../turns/turns.js';

/** What the dispatch routes to. */
export interface FrameDispatchOptions {
  turns: Pick<Turns, 'frame' | 'live'>;
  prompts: Pick<Prompts, 'frame'>;
  commands: Pick<CommandRunner, 'answer'>;
  /** Uploads the files the agent sends. */
  files: Pick<FileSender, 'frame'>;
  /**
   * Files crossing to and from a bridge on another host (protocol's `node/transfer.ts`); absent for a
   * local bridge, which shares the exchange directory: its transfer frames are dropped.
   */
  transfers?: Pick<TransferPeer, 'frame'> | undefined;
  /** The agent's schedule requests (its schedule_* tools). */
  schedules: Pick<Schedules, 'request'>;
  /** The daily budgets' ledger: sees the frames it reads before their owner does. */
  spend: Pick<SpendLedger, 'observe'>;
  /** `/resume`'s list and `/handoff`'s answer. */
  terminal?: Pick<TerminalCommands, 'frame'> | undefined;
  /** Sends a plain message to a chat (an operator event's warning). */
  reply(route: Route, text: string): void;
  /** The agent's latest `status` frame, for `/status`. */
  onAgentStatus(status: FrameOf<'status'>): void;
  /**
   * A running turn's API trouble, shown and taken back (see `io/turns/turn-notices.ts`); without it, a reply.
   */
  notices?: TurnNotices | undefined;
  /** A conversation's usage limit was reached or is over (`core/turns/usage-limit.ts`): its notice, here. */
  onUsageLimit?(frame: FrameOf<'usage_limit'>): void;
  /** An operator event arrived (for alerts; see `io/ops/alerts.ts`). */
  onOperatorEvent?(event: FrameOf<'operator_event'>): void;
  /**
   * Whether the bridge may address this route (a chat the agent talked in; see `known-chats.ts`).
   */
  allows(route: Route): boolean;
  /**
   * A failed turn (its error, which may be absent) or an operator event: the last error of its
   * conversation, or the agent's when it names none.
   */
  setLastError(message: string | undefined, route?: Route): void;
  logger: Logger;
}

/** The protocol server's `onFrame` for the gateway. */
export function createFrameDispatch(options: FrameDispatchOptions): (frame: AppFrame) => void {
  const { commands, logger } = options;
  return (frame) => {
    // Before the owner (a turn's start is recorded before the turn opens), and only what it reads.
    if (readBySpend(frame)) options.spend.observe(frame);
    const route = 'route' in frame ? frame.route : undefined;
    if (route && !options.allows(route)) {
      // The bridge may speak only for this agent's own conversations.
      logger.warn(
        { event: 'frame_for_unknown_chat', type: frame.type, chat: route.chatId },
        'dropped a bridge frame naming a chat this agent never talked in',
      );
      return;
    }
    const owned = ownerOf(frame);
    switch (owned.owner) {
      case 'turn': {
        const turnFrame = owned.frame;
        if (turnFrame.type === 'turn_ended' && turnFrame.outcome === 'error') {
          // Looked up before the frame ends the turn.
          const turn = options.turns.live().find((t) => t.turnId === turnFrame.turnId);
          options.setLastError(turnFrame.error, turn?.route);
        }
        if (turnFrame.type === 'turn_ended') options.notices?.turnEnded(turnFrame);
        if (turnFrame.type === 'usage_limit') options.onUsageLimit?.(turnFrame);
        options.turns.frame(turnFrame);
        return;
      }
      case 'prompt':
        options.prompts.frame(owned.frame);
        options.turns.frame(owned.frame);
        return;
      case 'status':
        options.onAgentStatus(owned.frame);
        commands.answer(owned.frame);
        return;
      case 'command':
        commands.answer(owned.frame);
        return;
      case 'operator': {
        const event = owned.frame;
        options.setLastError(event.message, event.route);
        logger.warn(
          { event: 'operator_event', kind: event.kind, turn: event.turnId },
          'agent reported a problem',
        );
        options.onOperatorEvent?.(event);
        if (options.notices?.show(event)) return;
        if (event.route) options.reply(event.route, `⚠️ ${event.message}`);
        return;
      }
      case 'file':
        options.files.frame(owned.frame);
        return;
      case 'transfer':
        if (options.transfers) void options.transfers.frame(owned.frame);
        else
          logger.warn(
            { event: 'unexpected_frame', type: owned.frame.type },
            'a local bridge sent a file transfer',
          );
        return;
      case 'schedule':
        options.schedules.request(owned.frame);
        return;
      case 'terminal':
        options.terminal?.frame(owned.frame);
        return;
      case 'wrong_way':
        logger.warn(
          { event: 'unexpected_frame', type: owned.frame.type },
          'the bridge sent a gateway-to-bridge frame',
        );
        return;
      default:
        assertNever(owned);
    }
  };
}
