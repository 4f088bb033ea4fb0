/**
 * What each frame from the gateway does: the routing from a protocol frame to the session machine, the
 * process supervisor and the delivery path. Every command is idempotent by key (`in:<inboundId>`,
 * `ans:<requestId>`, `cmd:<commandId>`): a frame the gateway resends after a reconnect is ignored once
 * delivered or held. A command that cannot be carried out is answered, never dropped: a message with
 * `messages_unread`, an answer to a prompt that is gone with `prompt_closed`, a command with a failed
 * `command_result`.
 *
 * Contract: the channel acknowledges a frame once the handler resolves, so anything the handler must
 * not lose (delivered keys, intents, held items) is on disk by then (`delivery.ts`).
 */
import type { Clock, FrameOf, GatewayToBridge, Receipt, TransferFrame } from '@switchyard/protocol';
import type { HeldFrame } from '../../core/delivery/hold.js';
import { modeAllowed, refusedModeText } from '../../core/prompts/permission-policy.js';
import { type FrameHandlers, handleFrame } from '../../core/session/frame-handlers.js';
import type { Session } from '../../core/session/session.js';
import type { Step } from '../../core/session/state.js';
import type { Delivery } from '../delivery/delivery.js';
import type { FrameSink } from '../outbox/frame-sink.js';
import type { Liveness } from '../process/child.js';
import type { Supervisor } from '../process/supervisor.js';
import type { TerminalGate } from '../terminal/gate.js';
import type { HistoryTail } from '../transcript/history-tail.js';

/**
 * The gateway's frames a conversation takes: all of the protocol's `GatewayToBridge` but those the bridge
 * routes itself (see `bridge.ts`), so a new gateway frame is a conversation's unless it is listed here.
 */
export type ConversationFrame = Exclude<
  GatewayToBridge,
  | FrameOf<'stop_session' | 'sessions_request' | 'resume_list_request' | 'file_sent' | 'schedule_result'>
  | TransferFrame
>;

/** What the command handler needs of the bridge around it. */
export interface CommandHost {
  readonly session: Session;
  readonly supervisor: Pick<Supervisor, 'child' | 'unknown' | 'detail' | 'ensure' | 'pid' | 'writable'>;
  readonly delivery: Delivery;
  readonly history: Pick<HistoryTail, 'entries' | 'rescan'>;
  emit: FrameSink['emit'];
  /** Stamps the messages the session machine accepts. */
  clock: Clock;
  /**
   * The session serves several chats (`conversations: shared`): a message from a chat other than the
   * running turn's waits for that turn to end instead of being steered into it.
   */
  shared: boolean;
  /**
   * Called before a line may go to the CLI: asks the recorded process's liveness — once per write: the
   * answer is handed on to `supervisor.writable` — and handles an exit found so. Returns that liveness, or
   * `undefined` when no process is recorded (none ever, or the one that died is handled now).
   */
  beforeWrite(): Liveness | undefined;
  /** `/rename`: the conversation's display name, kept in its snapshot at once. */
  rename(name: string): void;
  /** Sharing the session with a terminal: the message gate, `/resume`, `/handoff` (`io/terminal/gate.ts`). */
  terminal?: TerminalGate | undefined;
}

/** Builds the handler of gateway frames (the protocol client's `onFrame`). */
export function createCommandHandler(
  host: CommandHost,
): (frame: ConversationFrame, receipt?: Receipt) => Promise<void> {
  const { session, supervisor, delivery, emit } = host;
  /** The hold rules' verdict (`core/delivery/hold.ts`, performed by delivery): kept for later, or written now. */
  const admit = (frame: HeldFrame): 'held' | 'write' =>
    delivery.admit(frame, session.state.turn?.route, host.shared, session.limited);
  /** Answers a command that cannot be carried out. */
  const failCommand = (commandId: string, message: string): void =>
    emit([{ type: 'command_result', commandId, ok: false, message }]);
  /** Delivers a step whose first write is the command's own line (the rest go after it). */
  const deliverStep = (key: string, step: Step, receipt: Receipt | undefined): void => {
    const [line, ...rest] = step.writes;
    if (line !== undefined)
      delivery.deliver(key, line, { frames: step.frames, writes: rest }, undefined, receipt);
  };
  /** A prompt's answer: written if the prompt is open here and a process takes it, else closed. */
  const answer = async (
    frame: FrameOf<'permission_answer' | 'question_answer'>,
    receipt?: Receipt,
  ): Promise<void> => {
    const key = `ans:${frame.requestId}`;
    if (delivery.delivered(key)) return;
    const step = session.answer(frame);
    if (!step || !supervisor.child) {
      emit([{ type: 'prompt_closed', requestId: frame.requestId, reason: 'cancelled' }]);
      return;
    }
    deliverStep(key, step, receipt);
  };
  /** `/stop`, `/model`, `/mode`: a control request to the CLI. */
  const control = async (
    frame: FrameOf<'interrupt' | 'set_model' | 'set_mode'>,
    receipt?: Receipt,
  ): Promise<void> => {
    const key = `cmd:${frame.commandId}`;
    if (delivery.delivered(key)) return;
    host.beforeWrite();
    if (frame.type === 'interrupt' && !session.running) {
      failCommand(frame.commandId, 'Nothing is running in this conversation.');
      return;
    }
    const stopped = frame.type === 'interrupt' ? session.stopLimitWait(frame.commandId) : undefined;
    if (stopped) {
      // The CLI is idle behind the usage limit: nothing to write; what was held meanwhile goes in now.
      emit(stopped.frames);
      delivery.releaseHeld();
      return;
    }
    // The gateway refuses these too; a frame from any other sender is held to the same list.
    if (frame.type === 'set_mode' && !modeAllowed(session.permissions, frame.mode)) {
      failCommand(frame.commandId, refusedModeText(frame.mode, session.permissions));
      return;
    }
    // A model or mode for a conversation with no process starts one (resumed) to apply it to.
    if (frame.type !== 'interrupt') supervisor.ensure();
    if (!supervisor.child || supervisor.unknown) {
      failCommand(frame.commandId, supervisor.detail ?? 'the Claude process is not running');
      return;
    }
    const kind = frame.type;
    const value =
      frame.type === 'set_model' ? frame.model : frame.type === 'set_mode' ? frame.mode : undefined;
    deliverStep(key, session.control(kind, frame.commandId, value), receipt);
  };
  /** `/compact`, `/clear`: a slash command, held behind the running turn like a message. */
  const slashCommand = async (frame: FrameOf<'compact' | 'clear'>, receipt?: Receipt): Promise<void> => {
    const key = `cmd:${frame.commandId}`;
    if (delivery.delivered(key)) return;
    host.beforeWrite();
    if (!supervisor.ensure()) {
      failCommand(frame.commandId, supervisor.detail ?? 'the Claude process is not running');
      return;
    }
    if (admit(frame) === 'held') return;
    const step = session.acceptSlashCommand(frame.commandId, frame.route) as Step;
    delivery.deliverSlashCommand(frame, step, receipt);
  };
  /** Sharing the session with a terminal: the conversation's side of `/resume` and `/handoff`. */
  const terminal = async (
    frame: FrameOf<'resume_session' | 'handoff' | 'worktree_remove'>,
  ): Promise<void> => {
    host.terminal?.apply(frame);
  };
  const handlers: FrameHandlers<ConversationFrame['type']> = {
    async user_message(frame, receipt) {
      const key = `in:${frame.inboundId}`;
      if (delivery.delivered(key)) return;
      const seen = host.beforeWrite();
      if (host.terminal?.admit(key, frame)) return;
      if (admit(frame) === 'held') {
        // Held behind messages a dead process left (kept for the next one): this message, given a slot,
        // is what starts that process; its held items go in, in order, once it is idle.
        if (!supervisor.child && !supervisor.unknown) supervisor.ensure();
        return;
      }
      if (!supervisor.ensure()) {
        emit([
          {
            type: 'messages_unread',
            inboundIds: [frame.inboundId],
            reason: supervisor.detail ?? 'the Claude process is not running',
          },
        ]);
        return;
      }
      // Liveness is asked once per write: what `beforeWrite` saw holds for the process it saw; a
      // process `ensure` started just now (none was recorded) is asked here.
      if (!supervisor.writable(seen)) {
        // Started and gone at once, or dying: kept for the next process (or reported when none will
        // start), never written into a dead pipe and marked delivered.
        delivery.hold(key, frame);
        host.beforeWrite();
        return;
      }
      delivery.deliverMessage(frame, session.acceptUserMessage(frame, host.clock.now()), receipt);
    },
    permission_answer: answer,
    question_answer: answer,
    interrupt: control,
    set_model: control,
    set_mode: control,
    compact: slashCommand,
    clear: slashCommand,
    resume_session: terminal,
    handoff: terminal,
    worktree_remove: terminal,
    async status_request(frame) {
      // What the CLI flushed since the last watch event, so the answer includes the turn just ended.
      host.history.rescan();
      const history = host.history.entries;
      const p = supervisor.pid();
      const detail = supervisor.detail;
      const worktree = host.terminal?.worktree;
      emit(
        [
          session.statusFrame({
            commandId: frame.commandId,
            ...(supervisor.unknown ? { state: 'unknown' as const } : {}),
            ...(p !== undefined ? { pid: p } : {}),
            ...(detail !== undefined ? { detail } : {}),
          }),
        ].map((frame) => ({
          ...frame,
          // Copies: a queued frame must not change when the next reply is merged into an entry.
          ...(history.length > 0 ? { history: history.map((entry) => ({ ...entry })) } : {}),
          ...(worktree ? { worktree: { path: worktree.path, branch: worktree.branch } } : {}),
        })),
      );
    },
    async rename(frame) {
      host.rename(frame.name);
      emit([
        {
          type: 'command_result',
          commandId: frame.commandId,
          ok: true,
          message: `Renamed to “${frame.name}”.`,
        },
      ]);
    },
  };
  return (frame, receipt) => handleFrame(handlers, frame, receipt);
}
