/**
 * Supervision of the one Claude process: start it (with `--resume` when the conversation has an id),
 * adopt the recorded one after a bridge restart, notice when it is gone, report its exit, detect a crash
 * loop and restart with backoff, and report a turn that has gone silent (the stuck watchdog).
 *
 * Invariants:
 * - Never two CLIs on one session: a process is started only when none is held and the recorded one is
 *   not merely of unknown liveness (`/proc` would not say). While unknown, nothing is started, nothing is
 *   written, and the status says `unknown`.
 * - An exit is reported, never swallowed: the session machine's `processExited` frames (unread messages,
 *   open prompts, the running turn), then the host's `onExited` (held items), then an operator event with
 *   the stderr tail.
 * - What an exit leads to (a restart after a backoff, or a crash loop that waits for a person asking
 *   again through `ensure`) and when a silent turn is stuck (silent since the last stdout line or input,
 *   `noteActivity`) are `core/process/policy.ts`'s {@link processStep}: this shell feeds it events on
 *   its clock, performs the actions it returns, and arms one timer for its wake-up.
 */
import type { Route, TimerHandle } from '@switchyard/protocol';
import { describeError, describeStderr } from '@switchyard/protocol';
import { claudeArgs } from '../../core/process/claude-args.js';
import {
  initialProcessState,
  type ProcessAction,
  type ProcessEvent,
  type ProcessState,
  processStep,
} from '../../core/process/policy.js';
import { startMode } from '../../core/prompts/permission-policy.js';
import {
  adoptChild,
  ChildError,
  type ChildHandle,
  type ChildRecord,
  type Liveness,
  liveness,
  spawnChild,
  stderrTail,
} from './child.js';
import type { SupervisorHost, SupervisorOptions } from './supervisor-ports.js';

/** Owns the handle on the Claude process and decides when one is started. */
export class Supervisor {
  readonly #options: SupervisorOptions;
  readonly #host: SupervisorHost;
  #child: ChildHandle | undefined;
  #unknown = false;
  #detail: string | undefined;
  /** The policy's state; its durable part (exits, crash loop) is read from the record before each step. */
  #policy: ProcessState;
  /** The one timer, armed for the policy's wake-up ({@link #wakeAt}). */
  #timer: TimerHandle | undefined;
  #wakeAt: number | undefined;

  constructor(options: SupervisorOptions, host: SupervisorHost) {
    this.#options = options;
    this.#host = host;
    this.#policy = initialProcessState({ exits: [], crashLoop: false }, options.clock.now());
  }

  /** The process held, if any (also while its liveness is unknown). */
  get child(): ChildHandle | undefined {
    return this.#child;
  }

  /** Supervision ended (the conversation stopped): nothing may start a process through it any more. */
  get stopped(): boolean {
    return this.#policy.stopped;
  }

  /** Whether the recorded process's liveness cannot be read; nothing is started or written meanwhile. */
  get unknown(): boolean {
    return this.#unknown;
  }

  /** Why there is no usable process (stderr tail or start failure), for `/status` and refusals. */
  get detail(): string | undefined {
    return this.#detail;
  }

  /** The pid to report: the held process's, else the recorded one's. */
  pid(): number | undefined {
    return this.#child && !this.#unknown ? this.#child.record.pid : this.#host.record.child?.pid;
  }

  /** Takes over the recorded process (alive, unknown, or dead with output still to drain). */
  adopt(record: ChildRecord, state: Liveness): void {
    this.#child = adoptChild(this.#options.stateDir, record, this.#options.clock);
    this.#unknown = state === 'unknown';
  }

  /** Starts a new process; false (reported to the gateway) if it could not be started. */
  spawn(): boolean {
    const { session } = this.#host;
    const log = this.#options.log;
    const args = claudeArgs({
      resume: session.state.sessionId,
      // What `/model` and `/mode` set last in this conversation outlives its process (a mode only while
      // the operator still allows it).
      model: session.state.model ?? this.#options.model,
      permissionMode: startMode(session.permissions, session.state.mode, this.#options.permissionMode),
      settingSources: this.#options.settingSources,
      mcpConfig: this.#options.mcpConfig,
      extra: this.#options.claudeArgs,
    });
    let child: ChildHandle;
    try {
      this.#options.prepare?.();
      const spawned = spawnChild({
        stateDir: this.#options.stateDir,
        workDir: this.#options.workDir,
        bin: this.#options.claudeBin,
        args,
        env: this.#options.env,
        clock: this.#options.clock,
      });
      if (spawned.orphans.length > 0)
        log.warn(
          { pids: spawned.orphans },
          'ended processes an earlier bridge started on this fifo and never recorded',
        );
      child = spawned.handle;
      this.#child = child;
    } catch (err) {
      const message = describeError(err);
      log.error({ err: message }, 'could not start the Claude CLI');
      const detail = err instanceof ChildError ? err.message : message;
      this.#detail = detail;
      this.#host.emit([
        {
          type: 'operator_event',
          kind: err instanceof ChildError && err.code === 'cli_missing' ? 'cli_missing' : 'cli_exited',
          message: detail.slice(0, 4000),
        },
        session.statusFrame({ state: 'exited', detail }),
      ]);
      return false;
    }
    // The record is on disk before anything else happens: a bridge killed after this point adopts the
    // process; one killed before it never wrote anything that depends on it.
    this.#host.record.started(child.record);
    this.#step({ kind: 'started', at: this.#options.clock.now() });
    this.#host.onStarted();
    const started = session.processStarted();
    this.#host.persist(true);
    this.#host.emit(started.frames);
    log.info({ pid: child.record.pid, resume: session.state.sessionId ?? null }, 'started the Claude CLI');
    return true;
  }

  /** Makes sure a process is there to take input; false (with the reason sent) when there cannot be one. */
  ensure(): boolean {
    if (this.#child && !this.#unknown) return true;
    if (this.#unknown) return false;
    // A person asking again is the operator's go-ahead after a crash loop.
    this.#step({ kind: 'asked', at: this.#options.clock.now() });
    return this.spawn();
  }

  /**
   * Whether a line written now would reach a live process (see `ChildHandle.writable`); `known`, the
   * liveness the caller just read for this process, is used instead of asking again.
   */
  writable(known?: Liveness): boolean {
    return this.#child !== undefined && !this.#unknown && this.#child.writable(known);
  }

  /** Writes one line into the process's stdin; throws if there is no process or nothing reads the fifo. */
  writeLine(line: string): void {
    if (!this.#child) throw new ChildError('spawn_failed', 'no Claude process is running');
    this.#child.writeLine(line);
  }

  /** Writes lines the session machine produced; a failure is logged (the exit, if any, is found by `check`). */
  writeAll(lines: readonly string[]): void {
    for (const line of lines) {
      try {
        this.writeLine(line);
      } catch (err) {
        this.#options.log.warn({ err: describeError(err) }, 'could not write to the Claude process');
      }
    }
  }

  /** Output was read or input written: the stuck watchdog's silence starts again. */
  noteActivity(): void {
    this.#step({ kind: 'activity', at: this.#options.clock.now() });
  }

  /**
   * Asks the record whether the process lives: reports a change to or from `unknown`, handles an exit
   * (call it after stdout is drained: a partial last line never completes), and runs the stuck watchdog.
   */
  check(): void {
    const { session } = this.#host;
    const record = this.#host.record.child;
    if (!record) return;
    const state = liveness(record);
    if (state === 'unknown') {
      if (!this.#unknown) {
        this.#unknown = true;
        this.#options.log.warn(
          { pid: record.pid },
          'cannot tell whether the Claude process is alive; starting nothing',
        );
        this.#host.emit([session.statusFrame({ state: 'unknown', pid: record.pid })]);
      }
      return;
    }
    if (this.#unknown) {
      this.#unknown = false;
      this.#host.emit([session.statusFrame({ pid: record.pid })]);
    }
    if (state === 'dead') {
      this.#exited();
      return;
    }
    this.#step({
      kind: 'checked',
      at: this.#options.clock.now(),
      running: session.agentState() === 'running',
    });
  }

  /**
   * Stops supervising: no restart is scheduled any more. `shutdown` also terminates the process (SIGTERM,
   * `graceMs`, SIGKILL) and clears its record; `restart` leaves it running for the next bridge.
   */
  async stop(kind: 'restart' | 'shutdown', graceMs: number): Promise<void> {
    this.#step({ kind: 'stopped', at: this.#options.clock.now() });
    this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (kind === 'shutdown' && this.#child) {
      await this.#child.terminate(graceMs);
      this.#host.record.forget();
    }
    const child = this.#child;
    this.#child = undefined;
    await child?.detach();
  }

  #exited(): void {
    const { session, record } = this.#host;
    const stderr = stderrTail(this.#options.stateDir);
    const detail = stderr || 'the Claude process exited';
    this.#detail = detail;
    this.#options.log.warn(
      { pid: record.child?.pid, ...describeStderr(stderr) },
      'the Claude process exited',
    );
    const route = session.state.turn?.route ?? session.state.lastRoute;
    this.#step({ kind: 'exited', at: this.#options.clock.now() }, { stderr, detail, route });
    this.#host.persist(true);
  }

  /**
   * Feeds the policy one event, performs its actions in order, and arms the timer for its wake-up (again
   * only when that moved). `exit`: what `report_exit` tells, for an `exited` event.
   */
  #step(event: ProcessEvent, exit?: { stderr: string; detail: string; route: Route | undefined }): void {
    const record = this.#host.record;
    const current = { ...this.#policy, exits: record.exits, crashLoop: record.crashLoop };
    const step = processStep(this.#options, current, event);
    this.#policy = step.state;
    for (const action of step.actions) this.#perform(action, exit);
    this.#arm(step.wakeAt);
  }

  #perform(action: ProcessAction, exit?: { stderr: string; detail: string; route: Route | undefined }): void {
    const { session, record } = this.#host;
    switch (action.kind) {
      case 'report_exit': {
        const { restarting } = action;
        const exited = session.processExited(exit?.detail ?? 'the Claude process exited', {
          restarting,
          inTranscript: (id) => this.#host.inTranscript(id),
        });
        this.#host.emit(exited.frames);
        this.#host.onExited(restarting, exited.redeliver ?? []);
        const stderr = exit?.stderr ?? '';
        const message = (
          stderr ? `The Claude process exited:\n${stderr}` : 'The Claude process exited.'
        ).slice(0, 4000);
        const where = exit?.route ? { route: exit.route } : {};
        this.#host.emit([{ type: 'operator_event', kind: 'cli_exited', message, ...where }]);
        // The process is gone: nothing reads its fifo, so the detach finishes at once.
        void this.#child?.detach();
        this.#child = undefined;
        return;
      }
      case 'save_exits':
        record.exited(action.exits, action.crashLoop);
        return;
      case 'report_crash_loop':
        this.#host.emit([
          {
            type: 'operator_event',
            kind: 'crash_loop',
            message: `The Claude process exited ${action.exits} times within ${Math.round(action.windowMs / 1000)} s; not restarting it. Check its stderr, then send a message to try again.`,
          },
        ]);
        return;
      case 'lift_crash_loop':
        record.retry();
        return;
      case 'start':
        // Without a free slot the conversation stays stopped; its next message resumes it.
        if (!this.#child && this.#host.mayStart()) this.spawn();
        return;
      case 'report_stuck': {
        const turn = session.state.turn;
        this.#host.emit([
          {
            type: 'operator_event',
            kind: 'stuck',
            message: `No output from Claude for ${Math.round(action.silentMs / 1000)} s; it may be stuck. Send /stop to interrupt it.`,
            ...(turn ? { turnId: turn.id, route: turn.route } : {}),
          },
        ]);
        return;
      }
      default:
        action satisfies never;
    }
  }

  /** Arms the one timer for `at`, or none; one due no later than `at` is kept (its tick arms the rest). */
  #arm(at: number | undefined): void {
    const armed = this.#timer !== undefined;
    if (armed ? at !== undefined && (this.#wakeAt ?? at) <= at : at === undefined) return;
    const clock = this.#options.clock;
    clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wakeAt = at;
    if (at === undefined || this.#policy.stopped) return;
    this.#timer = clock.setTimeout(() => this.#tick(), Math.max(0, at - clock.now()));
  }

  #tick(): void {
    this.#timer = undefined;
    this.#wakeAt = undefined;
    this.#step({ kind: 'tick', at: this.#options.clock.now() });
  }
}
