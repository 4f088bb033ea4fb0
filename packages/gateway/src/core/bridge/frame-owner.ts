/**
 * Which part of the gateway owns each frame the bridge may send: one table over the protocol's union,
 * checked by the compiler (`satisfies Record<…>`), so a new frame type does not build until it has an
 * owner here. The dispatch (`io/bridge/bridge-frames.ts`) only looks the owner up and hands the frame over.
 * Beside the owners, one observer: the daily budgets' ledger reads the frames of {@link SPEND_READS}
 * before their owner does, and no other — a text delta never reaches it.
 */
import type { AppFrame } from '@switchyard/protocol/common';

/**
 * - `turn`: the turns (and through them the progress card);
 * - `prompt`: the prompts first, then the turns (the card shows the wait);
 * - `status`: the agent's status for `/status`, then the command that asked;
 * - `command`: the command runner's pending answer;
 * - `operator`: an operator event (logged, alerted, said in its chat);
 * - `file`: the file sender;
 * - `transfer`: the transfers of files with a bridge on another host (protocol's `node/transfer.ts`);
 * - `schedule`: the schedules (`io/automation/schedules.ts`), the agent's own schedule requests;
 * - `terminal`: `/resume`'s list and `/handoff`'s answer (`io/commands/terminal-commands.ts`);
 * - `wrong_way`: a gateway-to-bridge frame the bridge has no business sending (logged, dropped).
 */
export type FrameOwner =
  | 'turn'
  | 'prompt'
  | 'status'
  | 'command'
  | 'operator'
  | 'file'
  | 'transfer'
  | 'schedule'
  | 'terminal'
  | 'wrong_way';

/** The owner of every application frame type. */
export const FRAME_OWNER = {
  turn_started: 'turn',
  turn_ended: 'turn',
  text_delta: 'turn',
  text: 'turn',
  thinking: 'turn',
  tool_started: 'turn',
  tool_finished: 'turn',
  subagent_started: 'turn',
  subagent_tool_started: 'turn',
  subagent_tool_finished: 'turn',
  subagent_text: 'turn',
  subagent_finished: 'turn',
  message_taken: 'turn',
  messages_unread: 'turn',
  session_waiting: 'turn',
  usage_limit: 'turn',
  permission_request: 'prompt',
  question: 'prompt',
  prompt_closed: 'prompt',
  status: 'status',
  sessions: 'command',
  command_result: 'command',
  operator_event: 'operator',
  file_send: 'file',
  transfer_offer: 'transfer',
  transfer_chunk: 'transfer',
  transfer_ack: 'transfer',
  transfer_done: 'transfer',
  schedule_request: 'schedule',
  resume_list: 'terminal',
  handoff_result: 'terminal',
  user_message: 'wrong_way',
  permission_answer: 'wrong_way',
  question_answer: 'wrong_way',
  interrupt: 'wrong_way',
  set_model: 'wrong_way',
  set_mode: 'wrong_way',
  compact: 'wrong_way',
  clear: 'wrong_way',
  status_request: 'wrong_way',
  rename: 'wrong_way',
  stop_session: 'wrong_way',
  sessions_request: 'wrong_way',
  resume_list_request: 'wrong_way',
  resume_session: 'wrong_way',
  handoff: 'wrong_way',
  worktree_remove: 'wrong_way',
  file_sent: 'wrong_way',
  schedule_result: 'wrong_way',
} as const satisfies Record<AppFrame['type'], FrameOwner>;

/** The frames one owner receives. */
export type FramesOf<O extends FrameOwner> = Extract<
  AppFrame,
  {
    type: {
      [T in keyof typeof FRAME_OWNER]: (typeof FRAME_OWNER)[T] extends O ? T : never;
    }[keyof typeof FRAME_OWNER];
  }
>;

/** The owner of `frame`, with the frame narrowed to what that owner takes. */
export type Owned = { [O in FrameOwner]: { owner: O; frame: FramesOf<O> } }[FrameOwner];

/** Looks up the owner of a frame. */
export function ownerOf(frame: AppFrame): Owned {
  return { owner: FRAME_OWNER[frame.type], frame } as Owned;
}

/**
 * The frames the daily budgets' ledger (`io/spend/spend-ledger.ts`) reads, before their owner: a turn's
 * start and its cost, a command's cost, and the reports that settle a held message's reservation.
 */
export const SPEND_READS = [
  'turn_started',
  'turn_ended',
  'command_result',
  'message_taken',
  'messages_unread',
] as const satisfies readonly AppFrame['type'][];

/** A frame the ledger reads. */
export type SpendFrame = Extract<AppFrame, { type: (typeof SPEND_READS)[number] }>;

/** Whether the ledger reads `frame`. */
export function readBySpend(frame: AppFrame): frame is SpendFrame {
  return (SPEND_READS as readonly string[]).includes(frame.type);
}
