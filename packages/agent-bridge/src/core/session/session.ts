/**
 * The session machine: what the conversation with one Claude process is doing, as a pure state machine.
 * Translated stdout events and gateway commands go in; protocol frames (and lines for the CLI's stdin)
 * come out. No I/O, no clocks (the caller passes `now`), no randomness — so that a restarted bridge that
 * restores a snapshot and re-reads the same stdout lines produces the same frames in the same order with
 * the same turn ids, which is what lets the outbox drop the ones it already holds (see `frame-sink.ts`).
 *
 * Rules it keeps (measured, see `reference/claude-cli-probe.md`):
 * - A message written mid-turn is a steer. It is announced (`message_taken`) when the CLI echoes it
 *   (`--replay-user-messages`: a `user` line with `isReplay`, printed when the response to the model call
 *   that carries it begins, right before its `message_start`). A steer still unread when the turn ends
 *   (written during the last model call, or before an interrupt) is not lost: the CLI starts its next turn
 *   with it (measured on 2.1.328: `result`, then `system/init`, the echo and a new model call). So at the
 *   turn's end such messages open the next turn (`turn_started` with their ids, `message_taken`). Not the
 *   next `message_start`: one read after the write may belong to a call whose request went out before it,
 *   which never read the steer.
 * - Slash commands (`/clear`, `/compact`) are accepted only while nothing runs: the CLI absorbs queued
 *   messages into a running turn *past* a queued `/clear` (measured), which would answer a message
 *   meant for the new conversation in the old one. The bridge holds them (and what follows) until idle.
 * - A turn is running from the moment this side writes a message into an idle session, or from the first
 *   sign of main-agent work (a model call, text, a tool, a prompt) — which covers turns the CLI starts by
 *   itself after a background task and a process adopted mid-turn. Such a turn goes to the chat that
 *   started the work (the task's turn's route), else to the last route used.
 * - Sub-agent lines carry `parent_tool_use_id`; they belong to the turn that launched the agent, even after
 *   that turn's `result`, and never open or steer a turn.
 *
 * This file keeps turns and steers and what this side starts; what the CLI's stdout says is applied in
 * `core/session/events.ts`; the life of a prompt is in `prompts.ts`,
 * that of a sub-agent in `subagents.ts`, that of a control request in `controls.ts` — pure functions on the
 * same {@link SessionState} that `Session` calls.
 */
import { safeSlice } from '@switchyard/card';
import type { AgentState, AppFrame, FrameOf, Route } from '@switchyard/protocol/common';
import { DEFAULT_PERMISSION_POLICY, type PermissionPolicy } from '../prompts/permission-policy.js';
import { answerPrompt, type PromptContext } from '../prompts/prompts.js';
import { killSubagents } from '../subagents/subagents.js';
import type { CliEvent } from '../translate/translator.js';
import { failPendingControls, requestControl } from './controls.js';
import { applyEvent, type SessionOps } from './events.js';
import { resetLimit, stopLimitWait } from './limit.js';
import {
  initialSessionState,
  type PendingControl,
  type SessionState,
  type Step,
  type Turn,
} from './state.js';

const FALLBACK_ROUTE: Route = { chatId: 0 };

/** Who a session is: the prefix of its turn ids and the conversation's route, and what it may allow. */
export interface SessionIdentity {
  idPrefix?: string;
  route?: Route;
  /** The operator's limits on modes and "always allow" (default {@link DEFAULT_PERMISSION_POLICY}). */
  permissions?: PermissionPolicy;
  /** The working directory, for saying where a rule applies. */
  workDir?: string;
  /**
   * Whether a turn the login's usage limit refuses waits for the reset (default) instead of failing
   * (see {@link Session.limitReset}).
   */
  waitOutUsageLimit?: boolean | undefined;
}

/**
 * The machine. Methods mutate `state` and return the step; the caller persists `state` when it must
 * (see the bridge's snapshot rule) and hands the frames to the channel in the order given.
 */
export class Session {
  state: SessionState;
  /** Prepended to every turn id, so turns of different conversations never share an id. */
  readonly #idPrefix: string;
  /** The conversation's own route (absent for a session shared by several chats). */
  readonly #route: Route | undefined;
  /** What prompts, `set_mode` and a process start are held to. */
  readonly permissions: PermissionPolicy;
  readonly #prompt: PromptContext;
  /** What `core/session/events.ts` reaches of this machine. */
  readonly #ops: SessionOps;

  constructor(state: SessionState = initialSessionState(), identity: SessionIdentity = {}) {
    this.state = state;
    this.#idPrefix = identity.idPrefix ?? '';
    this.#route = identity.route;
    this.permissions = identity.permissions ?? DEFAULT_PERMISSION_POLICY;
    this.#prompt = { policy: this.permissions, workDir: identity.workDir ?? '.' };
    const current = (): SessionState => this.state;
    const running = (): boolean => this.running;
    this.#ops = {
      get state() {
        return current();
      },
      get running() {
        return running();
      },
      prompt: this.#prompt,
      agentState: () => this.agentState(),
      openTurn: (route, commandId) => this.#openTurn(route, commandId),
      proveTurn: (now, step) => this.#proveTurn(now, step),
      status: (reported, detail) => this.#status(reported, detail),
      clearAwaiting: () => this.#clearAwaiting(),
      waitOutLimit: identity.waitOutUsageLimit ?? true,
    };
  }

  /**
   * A new process was started (or is about to be), with `--replay-user-messages` (see the module
   * comment): nothing is running, nothing is waiting.
   */
  processStarted(): Step {
    const s = this.state;
    // What an earlier process held and nobody saw end: `stop-claude` ended it while no bridge ran and
    // cleared its record, so no exit was read. Reported as that exit first — a turn left open here kept
    // the gateway waiting for its answer, and every later answer of the chat behind it, for ever.
    const held = s.turn !== undefined || s.awaiting.length > 0 || Object.keys(s.prompts).length > 0;
    const ended = held
      ? this.processExited('the Claude process was stopped while no bridge was running').frames
      : [];
    s.generation += 1;
    delete s.untaken;
    s.initSeen = false;
    s.exited = false;
    s.compacting = false;
    delete s.turn;
    this.#clearAwaiting();
    s.prompts = {};
    s.controls = {};
    delete s.messageId;
    // The CLI's `total_cost_usd` counts from zero again in a new process.
    s.processCostUsd = 0;
    return { frames: [...ended, ...this.#status('idle')], writes: [] };
  }

  /** Whether a turn (or a slash command) is running: then a message is a steer and a command waits. */
  get running(): boolean {
    return this.state.turn !== undefined;
  }

  /** The state to report right now (for `status()` and `status_request`). */
  agentState(): Exclude<AgentState, 'starting' | 'unknown'> {
    const s = this.state;
    if (s.exited) return 'exited';
    if (s.compacting) return 'compacting';
    if (Object.keys(s.prompts).length > 0) return 'awaiting_input';
    if (s.limit) return 'limited';
    return this.running ? 'running' : 'idle';
  }

  /**
   * `/stop` while the usage limit is waited out: the CLI is idle (its turn was refused), so nothing is
   * written to it; the waiting turn ends as interrupted and the wait with it. `undefined` when not waiting.
   */
  stopLimitWait(commandId: string): Step | undefined {
    return stopLimitWait(this.#ops, commandId);
  }

  /** When the usage limit the conversation waits for resets (epoch ms); `undefined` when not limited. */
  get limitedUntil(): number | undefined {
    return this.state.limit?.resetsAt;
  }

  /** Whether a usage limit is being waited out: then nothing is written to the CLI. */
  get limited(): boolean {
    return this.state.limit !== undefined;
  }

  /**
   * The usage limit's reset time has come (`now` at or past it): the wait is over (`usage_limit`
   * `resumed`). With nothing `held` to write, the CLI is told to go on (`limit.ts`), so the waiting
   * turn answers the messages it was refused for; held messages, written next, do that.
   * `undefined` when nothing waits or it is too early.
   */
  limitReset(now: number, held: boolean): Step | undefined {
    return resetLimit(this.#ops, now, held);
  }

  /**
   * A user message the bridge is about to write. Into an idle session it opens a turn (announced at
   * once: it *is* the turn); into a running one it is a steer, announced later.
   */
  acceptUserMessage(message: FrameOf<'user_message'>, now: number): Step {
    const s = this.state;
    s.lastRoute = message.route;
    s.untaken = [...(s.untaken ?? []), message];
    if (this.running) {
      if (s.awaiting.length === 0) s.awaitingRequest = safeSlice(message.text, 0, 4096);
      s.awaiting.push(message.inboundId);
      return { frames: [], writes: [] };
    }
    const turn = this.#openTurn(message.route);
    const frames: AppFrame[] = [
      {
        type: 'turn_started',
        turnId: turn.id,
        route: turn.route,
        inboundIds: [message.inboundId],
        request: safeSlice(message.text, 0, 4096),
        startedAt: now,
      },
      { type: 'message_taken', turnId: turn.id, inboundIds: [message.inboundId] },
      ...this.#status(this.agentState()),
    ];
    return { frames, writes: [] };
  }

  /**
   * A slash command about to be written; its `result` answers `commandId`. Only while idle
   * (`!running`): see the module comment for why the caller holds it behind a running turn.
   * Returns `undefined` (nothing changed) when called while a turn runs.
   */
  acceptSlashCommand(commandId: string, route: Route | undefined): Step | undefined {
    const s = this.state;
    if (this.running) return undefined;
    this.#openTurn(route ?? s.lastRoute ?? FALLBACK_ROUTE, commandId);
    return { frames: this.#status(this.agentState()), writes: [] };
  }

  /**
   * A control request this side sends (interrupt, model, mode, initialize); returns the line to write and
   * the request id the CLI will answer under.
   */
  control(
    kind: PendingControl['kind'],
    commandId: string | undefined,
    value?: string,
  ): Step & { requestId: string } {
    const { line, requestId } = requestControl(this.state, kind, commandId, value);
    return { frames: [], writes: [line], requestId };
  }

  /** Whether a control request this side wrote is still unanswered (its `control_response` not yet read). */
  awaitsControl(requestId: string): boolean {
    return requestId in this.state.controls;
  }

  /**
   * The gateway's answer to a permission prompt or question. `undefined` when no such prompt is open
   * (answered already, cancelled, or from before a process restart): the caller says it has expired.
   */
  answer(frame: FrameOf<'permission_answer'> | FrameOf<'question_answer'>): Step | undefined {
    const answered = answerPrompt(this.state, frame, this.permissions);
    if (!answered) return undefined;
    return { frames: [answered.frame, ...this.#status(this.agentState())], writes: [answered.line] };
  }

  /** One stdout line's events. */
  onEvents(events: CliEvent[], now: number): Step {
    const step: Step = { frames: [], writes: [] };
    for (const event of events) applyEvent(this.#ops, event, now, step);
    return step;
  }

  /**
   * The process is gone. Everything it held is reported, never dropped: unread messages, open prompts,
   * the running turn. `detail` is the trimmed stderr tail for `/status`. With `restarting` (another
   * process starts next), messages no model call took (`untaken`) and that are not in the conversation's
   * transcript (`inTranscript`: the resumed process would have those in its history already) are not
   * reported but returned in `redeliver`, to be written to that process; the turn they opened ends
   * saying so.
   */
  processExited(
    detail: string,
    options: { restarting?: boolean; inTranscript?: (inboundId: string) => boolean } = {},
  ): Step {
    const s = this.state;
    const frames: AppFrame[] = [];
    const redeliver = options.restarting
      ? (s.untaken ?? []).filter((m) => !options.inTranscript?.(m.inboundId))
      : [];
    delete s.untaken;
    const again = new Set(redeliver.map((m) => m.inboundId));
    s.awaiting = s.awaiting.filter((id) => !again.has(id));
    if (s.awaiting.length > 0) {
      frames.push({
        type: 'messages_unread',
        inboundIds: [...s.awaiting],
        reason: 'the Claude process exited before it read these messages',
      });
      this.#clearAwaiting();
    }
    for (const requestId of Object.keys(s.prompts)) {
      frames.push({ type: 'prompt_closed', requestId, reason: 'exited' });
    }
    s.prompts = {};
    frames.push(...failPendingControls(s));
    if (s.turn) {
      if (s.turn.commandId !== undefined) {
        frames.push({
          type: 'command_result',
          commandId: s.turn.commandId,
          ok: false,
          message: 'the Claude process exited',
        });
      } else {
        frames.push({
          type: 'turn_ended',
          turnId: s.turn.id,
          outcome: 'error',
          error:
            redeliver.length > 0
              ? 'The Claude process exited before it read your message; it goes to the restarted one.'
              : 'The Claude process exited in the middle of this turn.',
        });
      }
    }
    frames.push(...killSubagents(s));
    delete s.turn;
    s.compacting = false;
    s.exited = true;
    frames.push(...this.#status('exited', detail));
    return { frames, writes: [], ...(redeliver.length > 0 ? { redeliver } : {}) };
  }

  /** A status frame for the current state, whether or not it changed (for `status_request`). */
  statusFrame(extra: {
    pid?: number;
    detail?: string;
    commandId?: string;
    state?: AgentState;
  }): FrameOf<'status'> {
    const s = this.state;
    const route = this.#route ?? s.turn?.route ?? s.lastRoute;
    return {
      type: 'status',
      ...(route !== undefined ? { route } : {}),
      state: extra.state ?? this.agentState(),
      ...(s.model !== undefined ? { model: s.model } : {}),
      ...(s.mode !== undefined ? { mode: s.mode } : {}),
      ...(s.sessionId !== undefined ? { sessionId: s.sessionId } : {}),
      ...(s.turn && s.turn.commandId === undefined ? { turnId: s.turn.id } : {}),
      ...(extra.pid !== undefined ? { pid: extra.pid } : {}),
      ...(extra.commandId !== undefined ? { costUsd: s.costUsd ?? 0 } : {}),
      ...(extra.detail !== undefined ? { detail: extra.detail.slice(-4000) } : {}),
      ...(extra.commandId !== undefined ? { commandId: extra.commandId } : {}),
    };
  }

  // -------------------------------------------------------------------------------------------------

  #openTurn(route: Route, commandId?: string): Turn {
    const s = this.state;
    s.turnCounter += 1;
    const turn: Turn = {
      id: `${this.#idPrefix}g${s.generation}-t${s.turnCounter}`,
      route,
      interruptRequested: false,
      ...(commandId !== undefined ? { commandId } : {}),
    };
    s.turn = turn;
    s.lastRoute = route;
    return turn;
  }

  #status(state: AgentState, detail?: string): AppFrame[] {
    if (this.state.reported === state && detail === undefined) return [];
    this.state.reported = state;
    return [this.statusFrame({ state, ...(detail ? { detail } : {}) })];
  }

  /** Opens a turn nobody here started, if none is running: the CLI is plainly working. */
  #proveTurn(now: number, step: Step): Turn {
    const s = this.state;
    if (s.turn) return s.turn;
    const route = s.selfRoute ?? s.lastRoute ?? FALLBACK_ROUTE;
    delete s.selfRoute;
    const turn = this.#openTurn(route);
    step.frames.push(
      { type: 'turn_started', turnId: turn.id, route, inboundIds: [], request: '', startedAt: now },
      ...this.#status(this.agentState()),
    );
    return turn;
  }

  #clearAwaiting(): void {
    this.state.awaiting = [];
    delete this.state.awaitingRequest;
  }
}
