/**
 * One conversation's Claude session: its process, its durable state and the loop that drives them. A
 * conversation is a chat or a forum topic (or, with `conversations: shared`, the whole agent); the bridge
 * keeps one {@link Conversation} per conversation that has a live process or is being served
 * (`bridge.ts` decides which, within `maxLiveSessions`).
 *
 * What is kept in the conversation's own directory (`<stateDir>/conversations/<dir>/`) and why:
 * - `bridge.json` (atomic snapshot): the process record, the stdout offset, the session machine's state,
 *   the keys of gateway commands already delivered into the CLI, an *intent* written just before a line
 *   goes to the CLI's stdin, held items, the transcript cursors and history, the display name.
 * - `stdin` (fifo), `stdout.log`, `stderr.log`: the process's own.
 * The channel's outbox is the bridge's, shared by all conversations; each frame in it is tagged with the
 * conversation and the stdout position (or inbound command) that produced it (`frame-sink.ts`). A
 * delivery saves the snapshot there instead, with the frames it announces and the channel cursor (one
 * durable write per message, `snapshot.ts`); `bridge.json` catches up later; loading takes the newer.
 *
 * Exactly once towards the gateway: after a restart the conversation restores its snapshot and re-reads
 * stdout from the snapshot's offset. The session machine is deterministic, so it regenerates the same
 * frames; those whose source tag the outbox already holds for this conversation are not sent again.
 * Exactly once into the CLI, and commands held behind a `/clear`: see `delivery.ts`. Never two CLIs on
 * one session: a new process is started only when the recorded one is proven dead; when liveness cannot
 * be read, nothing is started and the status is `unknown` (`supervisor.ts`).
 *
 * Longer than 400 lines because it is the one loop that drives a conversation's process, snapshot and
 * stdout; what the loop calls is in `conversation-parts.ts` and the parts it wires.
 */
import { type FSWatcher, mkdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import {
  type AppFrame,
  describeError,
  type FrameOf,
  type Logger,
  type Receipt,
  type Route,
  type SessionInfo,
} from '@switchyard/protocol';
import type { Session } from '../../core/session/session.js';
import { translateLine, translateOversized } from '../../core/translate/translator.js';
import type { Delivery } from '../delivery/delivery.js';
import type { FileTools } from '../mcp/file-tools.js';
import type { FrameSink } from '../outbox/frame-sink.js';
import { type Liveness, liveness, STDOUT_LOG } from '../process/child.js';
import { StdoutReader } from '../process/stdout-reader.js';
import { StdoutTrimmer } from '../process/stdout-trim.js';
import type { Supervisor } from '../process/supervisor.js';
import type { HistoryTail } from '../transcript/history-tail.js';
import type { ConversationOptions } from './conversation-options.js';
import { assembleParts } from './conversation-parts.js';
import { deliveryRecordOf, processRecordOf } from './conversation-record.js';
import type { LimitWait } from './limit-wait.js';
import { type Snapshot, SnapshotFile } from './snapshot.js';

/** Bytes of stdout handled per read: bounds the lines (and their parses) alive at once. */
const READ_BUDGET_BYTES = 256 * 1024;

/** One conversation's session; see the module comment. */
export class Conversation {
  readonly key: string;
  readonly #options: ConversationOptions;
  readonly #createdAt: number;
  readonly #log: Logger;
  readonly #snapshotFile: SnapshotFile;
  #snapshot!: Snapshot;
  #session!: Session;
  #sink!: FrameSink;
  #supervisor!: Supervisor;
  #delivery!: Delivery;
  #limit!: LimitWait;
  #tail: HistoryTail | undefined;
  #files: FileTools | undefined;
  #commands!: (frame: AppFrame, receipt?: Receipt) => Promise<void>;
  #reader: StdoutReader | undefined;
  readonly #trimmer: StdoutTrimmer;
  #watcher: FSWatcher | undefined;
  #stopped = false;
  #pumping = false;
  #wasRunning = false;

  constructor(options: ConversationOptions) {
    this.key = options.key;
    this.#createdAt = options.clock.now();
    this.#options = options;
    this.#log = options.log.child({ conversation: options.key });
    this.#snapshotFile = new SnapshotFile(
      options.dir,
      options.clock,
      (snapshot) => {
        snapshot.session = this.#session.state;
        snapshot.stdoutOffset = this.#reader?.offset ?? snapshot.stdoutOffset;
        if (this.#tail) snapshot.transcript = this.#tail.checkpoint();
      },
      { store: options.store, conversation: options.key },
    );
    this.#trimmer = new StdoutTrimmer({ path: join(options.dir, STDOUT_LOG), log: this.#log });
  }

  /** Where the conversation's chat is: its route, or (shared) the chat it last served. */
  get route(): Route | undefined {
    return this.#options.route ?? this.#session?.state.lastRoute;
  }

  /** Whether a Claude process is held (alive, or of unknown liveness). */
  get live(): boolean {
    return this.#supervisor?.child !== undefined;
  }

  /**
   * Whether its process may be stopped to make room: live, no turn or command running, no prompt open,
   * nothing held or being settled.
   */
  get evictable(): boolean {
    if (!this.live || this.#stopped || this.#supervisor.unknown) return false;
    const s = this.#session.state;
    return (
      s.turn === undefined &&
      Object.keys(s.prompts).length === 0 &&
      !s.compacting &&
      !this.#delivery.holding &&
      this.#snapshot.intent === undefined
    );
  }

  /** When it last had input or output (ms); else when this object was made, never "idle since 1970". */
  get lastActiveAt(): number {
    return this.#snapshot.lastActiveAt ?? this.#createdAt;
  }

  /** Messages waiting in this conversation (held behind a command, or not yet read by a running turn). */
  get queued(): number {
    return (this.#snapshot.held?.length ?? 0) + this.#session.state.awaiting.length;
  }

  /** Whether a prompt with this request id is open here. */
  hasPrompt(requestId: string): boolean {
    return requestId in this.#session.state.prompts;
  }

  /**
   * Restores the snapshot, adopts a live recorded process (reading on from the recorded offset and
   * settling a write a crash interrupted), or reads what a dead one said and reports its exit. Starts no
   * new process: that happens when the conversation is next asked to do something (`handle`).
   */
  async start(): Promise<void> {
    const options = this.#options;
    const log = this.#log;
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    this.#snapshot = this.#snapshotFile.load();
    const snapshot = this.#snapshot;
    if (options.route) snapshot.route = options.route;
    if (snapshot.name === undefined && options.settings.name !== undefined)
      snapshot.name = options.settings.name;
    snapshot.history ??= [];
    const parts = assembleParts(options, snapshot, log, {
      process: processRecordOf(() => this.#snapshot),
      delivery: deliveryRecordOf(() => this.#snapshot),
      persist: (force) => this.#persist(force),
      commit: (work, cursor, durable) =>
        options.store.group(() => {
          work();
          if (cursor) options.store.writePeer(cursor);
          this.#snapshotFile.saveInLog(this.#snapshot);
        }, durable),
      pump: () => this.pump(),
      readFromStart: () => {
        this.#reader?.close();
        this.#reader = this.#openStdout(0);
      },
      noticeExit: () => this.#noticeExit(),
    });
    const { session, tail, files, supervisor } = parts;
    this.#session = session;
    this.#sink = parts.sink;
    this.#tail = tail;
    this.#files = files;
    this.#supervisor = supervisor;
    this.#delivery = parts.delivery;
    this.#commands = parts.commands;
    this.#limit = parts.limit;

    // Before adoption: a process that survived the last bridge calls its tools back on this socket.
    await files.start();
    const record = snapshot.child;
    const state = record ? liveness(record) : 'dead';
    if (record && state !== 'dead') {
      // Alive or unknown: never start a second one. Adopt and read on from the recorded offset.
      supervisor.adopt(record, state);
      this.#reader = this.#openStdout(snapshot.stdoutOffset);
      log.info(
        { pid: record.pid, offset: snapshot.stdoutOffset, liveness: state },
        'adopted the Claude process',
      );
      // Before the first read: the replay of stdout from the offset may show the intent's line read.
      if (!supervisor.unknown) this.#delivery.beginSettle();
      this.pump();
      if (!supervisor.unknown) {
        const fenced = await this.#delivery.settle();
        // Re-arms prompts the CLI still has open that this side lost (answered by `initialize`); the
        // fence already was one.
        if (!fenced) supervisor.writeAll(session.control('initialize', undefined).writes);
        // Held items waited for the settled line; release them now if the CLI is idle.
        this.pump();
      }
    } else if (record) {
      // Dead while no bridge watched: read what it said and report the exit (restarted if configured).
      this.#reader = this.#openStdout(snapshot.stdoutOffset);
      supervisor.adopt(record, state);
      this.pump();
      delete snapshot.intent;
    }
    // After the adoption's pump: it may have moved the session on.
    tail.start();
    tail.follow(session.state.sessionId);
    this.#watcher = watch(options.dir, (_event, name) => {
      if (name !== STDOUT_LOG) return;
      try {
        this.pump();
      } catch (err) {
        options.onFailure(err);
      }
    });
    this.#watcher.on('error', (err) => log.warn({ err: describeError(err) }, 'state directory watch failed'));
  }

  /**
   * A frame from the gateway for this conversation (see `commands.ts`). Resolves once it is durable
   * here; the channel acknowledges it then.
   */
  async handle(frame: AppFrame, receipt?: Receipt): Promise<void> {
    this.#snapshot.lastActiveAt = this.#options.clock.now();
    if (frame.type === 'rename') {
      this.#snapshot.name = frame.name;
      this.#persist(true);
      this.#sink.emit([
        {
          type: 'command_result',
          commandId: frame.commandId,
          ok: true,
          message: `Renamed to “${frame.name}”.`,
        },
      ]);
      return;
    }
    await this.#commands(frame, receipt);
    this.pump();
  }

  /** Reads and handles every complete stdout line available, then checks liveness. */
  pump(): void {
    const reader = this.#reader;
    if (this.#pumping || this.#stopped || !reader) return;
    this.#pumping = true;
    const log = this.#log;
    const session = this.#session;
    const supervisor = this.#supervisor;
    const delivery = this.#delivery;
    const maxLineBytes = this.#options.maxLineBytes;
    try {
      for (;;) {
        let lines: ReturnType<StdoutReader['read']>;
        try {
          lines = reader.read(READ_BUDGET_BYTES);
        } catch (err) {
          // No log yet (no process was ever started here) is not an error: there is nothing to read.
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
            log.error({ err: describeError(err) }, 'could not read stdout');
          }
          lines = [];
        }
        if (lines.length === 0) break;
        supervisor.noteActivity();
        this.#snapshot.lastActiveAt = this.#options.clock.now();
        const generation = session.state.generation;
        for (const line of lines) {
          // An oversized line comes as its two ends only: enough to answer a request the CLI waits on.
          if (line.text === undefined || line.text.trim() !== '') {
            const events =
              line.text === undefined
                ? translateOversized(line)
                : translateLine(line.text, line.bytes, maxLineBytes);
            for (const event of events) {
              if (event.kind === 'skipped')
                log.warn({ bytes: event.bytes, reason: event.reason }, 'skipped a stdout line');
              if (event.kind === 'input_queued') delivery.noteQueued(event.uuid);
            }
            const step = session.onEvents(events, this.#options.clock.now());
            supervisor.writeAll(step.writes);
            this.#sink.emit(step.frames, (index) => [generation, line.end, index]);
          }
          reader.advance(line.end);
          // After the line is handled and the offset moved past it: a snapshot written by a release
          // never makes a restarted bridge handle this line, and so release, again.
          if (delivery.holding && !session.running) delivery.releaseHeld();
        }
        this.#sink.flush();
        this.#persist(false);
      }
      // Also here, not only after a line: a bridge restarted with held items next to an idle CLI.
      if (delivery.holding && !session.running) delivery.releaseHeld();
      if (this.#snapshotFile.dirty) this.#persist(false);
      this.#tail?.follow(session.state.sessionId);
      this.#limit.arm();
      supervisor.check();
      const running = session.running;
      if (this.#wasRunning && !running) this.#options.onSettled();
      this.#wasRunning = running;
    } finally {
      this.#pumping = false;
    }
  }

  /**
   * `restart`: stop reading, leaving the process running for the next bridge to adopt. `shutdown`: also
   * stop the process (SIGTERM, grace, SIGKILL) and clear its record; the session id stays, so the next
   * message resumes the conversation (`--resume`).
   */
  async stop(kind: 'restart' | 'shutdown'): Promise<void> {
    this.#stopped = true;
    this.#watcher?.close();
    this.#limit?.stop();
    this.#tail?.stop();
    await this.#files?.stop();
    await this.#supervisor?.stop(kind, this.#options.stopGraceMs);
    if (kind === 'shutdown' && this.#session) {
      this.#session.state.exited = true;
      delete this.#session.state.reported;
    }
    if (this.#snapshot) this.#persist(true);
    this.#reader?.close();
  }

  /** The conversation as `/sessions` lists it. */
  info(): SessionInfo {
    const s = this.#session.state;
    const pid = this.#supervisor.pid();
    const route = this.#options.route ?? s.turn?.route ?? s.lastRoute ?? { chatId: 0 };
    return {
      route,
      ...(this.#snapshot.name !== undefined ? { name: this.#snapshot.name } : {}),
      live: this.live,
      state: this.#supervisor.unknown ? 'unknown' : this.live ? this.#session.agentState() : 'idle',
      ...(s.turn && s.turn.commandId === undefined ? { turnId: s.turn.id } : {}),
      queued: this.queued,
      costUsd: s.costUsd ?? 0,
      ...(this.live && pid !== undefined ? { pid } : {}),
      ...(s.sessionId !== undefined ? { sessionId: s.sessionId } : {}),
      ...(s.model !== undefined ? { model: s.model } : {}),
      ...(this.#snapshot.lastActiveAt !== undefined ? { lastActiveAt: this.#snapshot.lastActiveAt } : {}),
    };
  }

  /** What `status()` reports for this conversation. */
  status(): { state: SessionInfo['state']; pid?: number; sessionId?: string; detail?: string } {
    const pid = this.#supervisor.pid();
    const detail = this.#supervisor.detail;
    const state = this.#supervisor.unknown
      ? 'unknown'
      : this.live || detail !== undefined
        ? this.#session.agentState()
        : 'idle';
    return {
      state,
      ...(pid !== undefined ? { pid } : {}),
      ...(this.#session.state.sessionId !== undefined ? { sessionId: this.#session.state.sessionId } : {}),
      ...(detail !== undefined ? { detail } : {}),
    };
  }

  /** The gateway's answer to a file this conversation sent (ignored when the id is not its own). */
  settleFile(frame: FrameOf<'file_sent'>): void {
    this.#files?.settle(frame);
  }

  /** Emits frames for this conversation (no source tag). */
  emit(frames: AppFrame[]): void {
    this.#sink.emit(frames);
  }

  /** A status frame answering `commandId` for a conversation not live right now. */
  statusFrame(commandId: string): FrameOf<'status'> {
    return this.#session.statusFrame({ commandId, state: this.live ? this.#session.agentState() : 'idle' });
  }

  /**
   * Before a line goes to the CLI: if the recorded process has died since the last check, handle the exit
   * now (report it, clear the record), so the line goes to a new process instead of a dead pipe.
   */
  #noticeExit(): Liveness | undefined {
    const record = this.#snapshot.child;
    if (!record) return undefined;
    const state = liveness(record);
    if (state !== 'dead') return state;
    this.pump();
    return this.#snapshot.child === undefined ? undefined : liveness(this.#snapshot.child);
  }

  #openStdout(offset: number): StdoutReader {
    return new StdoutReader(join(this.#options.dir, STDOUT_LOG), offset, this.#options.maxLineBytes);
  }

  #persist(force: boolean): void {
    this.#snapshotFile.save(this.#snapshot, force);
    // The snapshot's offset is the one on disk (it is captured only when written); the reader's is lower
    // only for a moment after a new process truncated the log.
    if (this.#reader) this.#trimmer.recorded(Math.min(this.#snapshot.stdoutOffset, this.#reader.offset));
  }
}
