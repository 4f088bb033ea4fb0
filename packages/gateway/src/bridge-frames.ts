/**
 * The bridge-frame dispatch: every frame the agent's bridge sends, routed to the module that owns it —
 * turn and text events to the turns (and through them the card), prompts to the prompts and the turns
 * (the card shows the wait), command results and status to the command runner. The switch is exhaustive
 * over the protocol's union, so a new frame type does not compile until it is routed here.
 */
import {
  type AppFrame,
  assertNever,
  type BridgeToGateway,
  type FrameOf,
  type GatewayToBridge,
  type Logger,
  type Route,
} from '@switchyard/protocol';
import type { CommandRunner } from './commands.js';
import type { FileSender } from './files.js';
import type { Prompts } from './prompts.js';
import type { Turns } from './turns.js';

/** What the dispatch routes to. */
export interface FrameDispatchOptions {
  /** The running renderers; undefined before the gateway has started (then turn and prompt frames drop). */
  live(): { turns: Pick<Turns, 'frame'>; prompts: Pick<Prompts, 'frame'> } | undefined;
  commands: Pick<CommandRunner, 'answer'>;
  /** Uploads the files the agent sends. */
  files: Pick<FileSender, 'frame'>;
  /** Sends a plain message to a chat (an operator event's warning). */
  reply(route: Route, text: string): void;
  /** The agent's latest `status` frame, for `/status`. */
  onAgentStatus(status: FrameOf<'status'>): void;
  /** An operator event arrived (for alerts; see `alerts.ts`). */
  onOperatorEvent?(event: FrameOf<'operator_event'>): void;
  /** Whether the bridge may address this route (a chat the agent talked in; see `known-chats.ts`). */
  allows(route: Route): boolean;
  /** A failed turn (its error, which may be absent) or an operator event: the gateway's `lastError`. */
  setLastError(message: string | undefined): void;
  logger: Logger;
}

/** The protocol server's `onFrame` for the gateway. */
export function createFrameDispatch(options: FrameDispatchOptions): (frame: AppFrame) => void {
  const { commands, logger } = options;
  return (frame) => {
    const f = frame as BridgeToGateway | GatewayToBridge;
    const route = 'route' in f ? f.route : undefined;
    if (route && !options.allows(route)) {
      // The bridge may speak only for this agent's own conversations.
      logger.warn(
        { event: 'frame_for_unknown_chat', type: f.type, chat: route.chatId },
        'dropped a bridge frame naming a chat this agent never talked in',
      );
      return;
    }
    switch (f.type) {
      case 'turn_started':
      case 'turn_ended':
      case 'text_delta':
      case 'text':
      case 'thinking':
      case 'tool_started':
      case 'tool_finished':
      case 'subagent_started':
      case 'subagent_tool_started':
      case 'subagent_tool_finished':
      case 'subagent_text':
      case 'subagent_finished':
      case 'message_taken':
      case 'messages_unread':
        options.live()?.turns.frame(f);
        if (f.type === 'turn_ended' && f.outcome === 'error') options.setLastError(f.error);
        return;
      case 'permission_request':
      case 'question':
      case 'prompt_closed':
        options.live()?.prompts.frame(f);
        options.live()?.turns.frame(f);
        return;
      case 'status':
        options.onAgentStatus(f);
        commands.answer(f);
        return;
      case 'sessions':
        commands.answer(f);
        return;
      case 'session_waiting':
        options.live()?.turns.frame(f);
        return;
      case 'operator_event':
        options.setLastError(f.message);
        logger.warn({ event: 'operator_event', kind: f.kind, turn: f.turnId }, 'agent reported a problem');
        options.onOperatorEvent?.(f);
        if (f.route) options.reply(f.route, `⚠️ ${f.message}`);
        return;
      case 'command_result':
        commands.answer(f);
        return;
      case 'file_send':
        options.files.frame(f);
        return;
      case 'user_message':
      case 'permission_answer':
      case 'question_answer':
      case 'interrupt':
      case 'set_model':
      case 'set_mode':
      case 'compact':
      case 'clear':
      case 'status_request':
      case 'rename':
      case 'stop_session':
      case 'sessions_request':
      case 'file_sent':
        logger.warn({ event: 'unexpected_frame', type: f.type }, 'the bridge sent a gateway-to-bridge frame');
        return;
      default:
        assertNever(f);
    }
  };
}
