/**
 * The parts of one conversation, wired together: the session machine, the frame sink, the transcript
 * tail, the file tools, the supervisor, delivery and the command handler. The conversation owns them;
 * they reach back into it only through the {@link ConversationPort} (their parts of its snapshot, its
 * persistence, its stdout), so `Conversation` stays the only writer of its snapshot.
 */
import { dirname, join } from 'node:path';
import type { Logger, PeerCursor, Receipt } from '@switchyard/protocol';
import { Session } from '../../core/session/session.js';
import { Delivery, type DeliveryRecordPort } from '../delivery/delivery.js';
import { deliveryMarker } from '../delivery/user-input.js';
import { confirmsFileSends, createFileTools, type FileTools } from '../mcp/file-tools.js';
import { FrameSink } from '../outbox/frame-sink.js';
import { type Liveness, STDIN_FIFO } from '../process/child.js';
import { Supervisor } from '../process/supervisor.js';
import type { ProcessRecordPort } from '../process/supervisor-ports.js';
import { ensureWorktree } from '../process/worktree.js';
import { createTerminalGate } from '../terminal/gate.js';
import { claudeConfigDir, findMarker } from '../transcript/files.js';
import { HistoryTail } from '../transcript/history-tail.js';
import { type ConversationFrame, createCommandHandler } from './commands.js';
import type { ConversationOptions } from './conversation-options.js';
import { createLimitWait, type LimitWait } from './limit-wait.js';
import type { Snapshot } from './snapshot.js';

/** What the parts ask of the conversation that owns them. */
export interface ConversationPort {
  /** The supervisor's part of the snapshot: the process record, exits, the crash-loop flag. */
  readonly process: ProcessRecordPort;
  /** Delivery's part of the snapshot: delivered keys, the intent, held items. */
  readonly delivery: DeliveryRecordPort;
  /** Writes the snapshot (throttled unless `force`). */
  persist(force: boolean): void;
  /**
   * Runs `work` (which sends frames) and saves the snapshot with them, and `cursor` when given, as one
   * durable write (see `Delivery.deliver`); throws, with nothing stored, if that write fails.
   */
  commit(work: () => void, cursor?: PeerCursor, durable?: () => void): void;
  /** Reads and handles the stdout available now. */
  pump(): void;
  /** `/rename`: the display name, written into the snapshot at once. */
  rename(name: string): void;
  /** A new process started: its stdout is read from offset 0. */
  readFromStart(): void;
  /**
   * Before a line goes to the CLI: asks the recorded process's liveness and handles an exit found so;
   * returns that liveness, `undefined` when no process is recorded (any more).
   */
  noticeExit(): Liveness | undefined;
}

/** One conversation's parts (see the module comment). */
export interface ConversationParts {
  session: Session;
  sink: FrameSink;
  tail: HistoryTail;
  files: FileTools;
  supervisor: Supervisor;
  delivery: Delivery;
  commands: (frame: ConversationFrame, receipt?: Receipt) => Promise<void>;
  /** The wait for a usage limit's reset (`limit-wait.ts`). */
  limit: LimitWait;
}

/** Builds the parts around a restored snapshot (read only: its session state, history, cursors); starts nothing. */
export function assembleParts(
  options: ConversationOptions,
  snapshot: Snapshot,
  log: Logger,
  port: ConversationPort,
): ConversationParts {
  const configDir = claudeConfigDir(options.env);
  const worktree = options.settings.worktree;
  const session = new Session(snapshot.session, {
    idPrefix: `${options.key}/`,
    ...(options.route ? { route: options.route } : {}),
    ...(options.settings.permissions ? { permissions: options.settings.permissions } : {}),
    workDir: options.settings.workDir,
    waitOutUsageLimit: options.settings.waitOutUsageLimit,
  });
  const tail = new HistoryTail({
    configDir,
    workDir: options.settings.workDir,
    sessionId: session.state.sessionId,
    cursors: snapshot.transcript,
    history: snapshot.history ?? [],
    onEntry: () => port.persist(false),
    log,
    clock: options.clock,
  });
  const sink = new FrameSink(options.endpoint, options.store, log, options.key);
  const emit: FrameSink['emit'] = (frames, tag, inbound) => sink.emit(frames, tag, inbound);
  const files = createFileTools({
    ...options.files,
    confirmSends: confirmsFileSends(options.settings.confirmFileSends, options.route),
    stateDir: options.dir,
    exchange: options.exchange,
    workDir: options.settings.workDir,
    userMcpConfig: options.mcpConfig,
    emit: (frame) => emit([frame]),
    target: () => {
      const turn = session.state.turn;
      const route = turn?.route ?? session.state.lastRoute ?? options.route;
      return route ? { turnId: turn?.id, route } : undefined;
    },
    clock: options.clock,
    log,
  });
  const supervisor = new Supervisor(
    {
      stateDir: options.dir,
      workDir: options.settings.workDir,
      claudeBin: options.claudeBin,
      claudeArgs: [...files.claudeArgs, ...(options.claudeArgs ?? [])],
      env: files.claudeEnv(options.env),
      model: options.settings.model,
      permissionMode: options.settings.permissionMode,
      settingSources: options.settings.settingSources,
      mcpConfig: files.mcpConfig,
      restartOnExit: options.restartOnExit,
      stuckAfterMs: options.stuckAfterMs,
      crashLoop: options.crashLoop,
      log,
      clock: options.clock,
      prepare: worktree ? () => ensureWorktree(worktree) : undefined,
    },
    {
      record: port.process,
      session,
      emit,
      persist: (force) => port.persist(force),
      mayStart: () => options.mayStart(),
      onStarted: () => {
        port.readFromStart();
        sink.replayUntil = undefined;
      },
      inTranscript: (id) => findMarker(configDir, options.settings.workDir, deliveryMarker(id)),
      onExited: (restarting, redeliver) => {
        // Kept for the process about to start (released once it is idle); reported if none will.
        if (restarting) delivery.holdFirst(redeliver);
        else delivery.dropHeld('the Claude process exited before it read them');
        options.onSettled();
      },
    },
  );
  const delivery = new Delivery(
    {
      log,
      clock: options.clock,
      onStage: options.onDeliveryStage,
    },
    {
      record: port.delivery,
      session,
      supervisor,
      emit,
      persist: (force) => port.persist(force),
      commit: (work, cursor, durable) => port.commit(work, cursor, durable),
      pump: () => port.pump(),
    },
  );
  const terminal = createTerminalGate({
    session,
    supervisor,
    delivery,
    history: tail,
    emit: (frames) => emit(frames),
    persist: (force) => port.persist(force),
    mayStart: () => options.mayStart(),
    // The conversation's directory is `<stateDir>/conversations/<dir>` (`pool.ts`).
    conversationsDir: dirname(options.dir),
    fifo: join(options.dir, STDIN_FIFO),
    configDir,
    configDirSet: options.env.CLAUDE_CONFIG_DIR !== undefined,
    workDir: options.settings.workDir,
    worktree,
    log,
    clock: options.clock,
  });
  const commands = createCommandHandler({
    session,
    supervisor,
    delivery,
    history: tail,
    emit,
    clock: options.clock,
    shared: options.route === undefined,
    beforeWrite: () => port.noticeExit(),
    rename: (name) => port.rename(name),
    terminal,
  });
  const limit = createLimitWait({
    session,
    delivery,
    supervisor,
    emit,
    persist: (force) => port.persist(force),
    clock: options.clock,
  });
  return { session, sink, tail, files, supervisor, delivery, commands, limit };
}
