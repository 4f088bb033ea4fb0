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
 * This file is longer than 400 lines because it is the snapshot's one writer: adoption (`start`), the
 * read loop (`pump` and the four steps under it), `stop` and the status it reports all change or read
 * the same snapshot and parts, and the order between them (a line read past before a release, the
 * snapshot saved after) is the restart contract above.
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
import { ownSessions } from '../../core/session/state.js';
import { translateLine, translateOversized } from '../../core/translate/translator.js';
import { type Liveness, liveness, STDOUT_LOG } from '../process/child.js';
import { type StdoutLine, StdoutReader } from '../process/stdout-reader.js';
import { StdoutTrimmer } from '../process/stdout-trim.js';
import type { ConversationFrame } from './commands.js';
import type { ConversationOptions } from './conversation-options.js';
import { assembleParts, type ConversationParts } from './conversation-parts.js';
import { deliveryRecordOf, processRecordOf } from './conversation-record.js';
import { type Snapshot, SnapshotFile } from './snapshot.js';

/** Bytes of stdout handled per read: bounds the lines (and their parses) alive at once. */
const READ_BUDGET_BYTES = 256 * 1024;

/** What `start()` builds: the restored snapshot and the parts that work on it. */
type Started = ConversationParts & { readonly snapshot: Snapshot };

/** One conversation's session; see the module comment. */
export class Conversation {
  readonly key: string;
  readonly #options: ConversationOptions;
  readonly #createdAt: number;
  readonly #log: Logger;
  readonly #snapshotFile: SnapshotFile;
  /** The snapshot and the parts around it, from `start()` on; nothing before. */
  #started: Started | undefined;
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
        snapshot.session = this.#parts.session.state;
        snapshot.stdoutOffset = this.#reader?.offset ?? snapshot.stdoutOffset;
        snapshot.transcript = this.#parts.tail.checkpoint();
      },
      { store: options.store, conversation: options.key },
    );
    this.#trimmer = new StdoutTrimmer({ path: join(options.dir, STDOUT_LOG), log: this.#log });
  }

  /** Where the conversation's chat is: its route, or (shared) the chat it last served. */
  get route(): Route | undefined {
    return this.#options.route ?? this.#started?.session.state.lastRoute;
  }

  /** Whether a Claude process is held (alive, or of unknown liveness). */
  get live(): boolean {
    return this.#started?.supervisor.child !== undefined;
  }

  /**
   * Whether its process may be stopped to make room: live, no turn or command running, no prompt open,
   * nothing held or being settled.
   */
  get evictable(): boolean {
    if (!this.live || this.#stopped || this.#parts.supervisor.unknown) return false;
    const s = this.#parts.session.state;
    return (
      s.turn === undefined &&
      Object.keys(s.prompts).length === 0 &&
      !s.compacting &&
      !this.#parts.delivery.holding &&
      this.#parts.snapshot.intent === undefined
    );
  }

  /** When it last had input or output (ms); else when this object was made, never "idle since 1970". */
  get lastActiveAt(): number {
    return this.#parts.snapshot.lastActiveAt ?? this.#createdAt;
  }

  /** Messages waiting in this conversation (held behind a command, or not yet read by a running turn). */
  get queued(): number {
    return (this.#parts.snapshot.held?.length ?? 0) + this.#parts.session.state.awaiting.length;
  }

  /** Whether a prompt with this request id is open here. */
  hasPrompt(requestId: string): boolean {
    return requestId in this.#parts.session.state.prompts;
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
    const snapshot = this.#snapshotFile.load();
    if (options.route) snapshot.route = options.route;
    if (snapshot.name === undefined && options.settings.name !== undefined)
      snapshot.name = options.settings.name;
    snapshot.history ??= [];
    const parts = assembleParts(options, snapshot, log, {
      process: processRecordOf(() => snapshot),
      delivery: deliveryRecordOf(() => snapshot),
      persist: (force) => this.#persist(force, snapshot),
      commit: (work, cursor, durable) =>
        options.store.group(() => {
          work();
          if (cursor) options.store.writePeer(cursor);
          this.#snapshotFile.saveInLog(snapshot);
        }, durable),
      pump: () => this.pump(),
      rename: (name) => {
        snapshot.name = name;
        this.#persist(true, snapshot);
      },
      readFromStart: () => {
        this.#reader?.close();
        this.#reader = this.#openStdout(0);
      },
      noticeExit: () => this.#noticeExit(),
    });
    this.#started = { ...parts, snapshot };
    const { session, tail, files, supervisor, delivery } = parts;

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
      if (!supervisor.unknown) delivery.beginSettle();
      this.pump();
      if (!supervisor.unknown) {
        const fenced = await delivery.settle();
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
  async handle(frame: ConversationFrame, receipt?: Receipt): Promise<void> {
    this.#parts.snapshot.lastActiveAt = this.#options.clock.now();
    await this.#parts.commands(frame, receipt);
    this.pump();
  }

  /** Reads and handles every complete stdout line available, then checks liveness. */
  pump(): void {
    const reader = this.#reader;
    if (this.#pumping || this.#stopped || !reader) return;
    this.#pumping = true;
    try {
      for (let lines = this.#read(reader); lines.length > 0; lines = this.#read(reader)) {
        this.#handleLines(reader, lines);
      }
      this.#afterReading();
    } finally {
      this.#pumping = false;
    }
  }

  /** The next whole lines of stdout, at most {@link READ_BUDGET_BYTES}; none when there is no log yet. */
  #read(reader: StdoutReader): StdoutLine[] {
    try {
      return reader.read(READ_BUDGET_BYTES);
    } catch (err) {
      // No log yet (no process was ever started here) is not an error: there is nothing to read.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.#log.error({ err: describeError(err) }, 'could not read stdout');
      }
      return [];
    }
  }

  /** One read's lines, each handled and read past in turn; then their frames flushed and the snapshot saved. */
  #handleLines(reader: StdoutReader, lines: StdoutLine[]): void {
    const { session, supervisor, sink, snapshot } = this.#parts;
    supervisor.noteActivity();
    snapshot.lastActiveAt = this.#options.clock.now();
    const generation = session.state.generation;
    for (const line of lines) {
      // An oversized line comes as its two ends only: enough to answer a request the CLI waits on.
      if (line.text === undefined || line.text.trim() !== '') this.#handleLine(line, generation);
      reader.advance(line.end);
      // After the line is handled and the offset moved past it: a snapshot written by a release
      // never makes a restarted bridge handle this line, and so release, again.
      this.#releaseHeldIfIdle();
    }
    sink.flush();
    this.#persist(false);
  }

  /** One stdout line: translated, applied to the session machine, and the step's lines and frames sent. */
  #handleLine(line: StdoutLine, generation: number): void {
    const { session, supervisor, delivery, sink } = this.#parts;
    const events =
      line.text === undefined
        ? translateOversized(line)
        : translateLine(line.text, line.bytes, this.#options.maxLineBytes);
    for (const event of events) {
      if (event.kind === 'skipped')
        this.#log.warn({ bytes: event.bytes, reason: event.reason }, 'skipped a stdout line');
      if (event.kind === 'input_queued') delivery.noteQueued(event.uuid);
    }
    const step = session.onEvents(events, this.#options.clock.now());
    supervisor.writeAll(step.writes);
    sink.emit(step.frames, (index) => [generation, line.end, index]);
  }

  /** Once nothing is left to read: held items, the snapshot, the transcript, liveness, a turn's end. */
  #afterReading(): void {
    const { session, supervisor, tail, limit } = this.#parts;
    // Also here, not only after a line: a bridge restarted with held items next to an idle CLI.
    this.#releaseHeldIfIdle();
    if (this.#snapshotFile.dirty) this.#persist(false);
    tail.follow(session.state.sessionId);
    // A usage limit's reset, from the state (the snapshot's, after a restart): its timer is armed.
    limit.arm();
    supervisor.check();
    const running = session.running;
    if (this.#wasRunning && !running) this.#options.onSettled();
    this.#wasRunning = running;
  }

  /** Items held behind a `/clear` or a dead process go to the CLI once it is idle. */
  #releaseHeldIfIdle(): void {
    const { session, delivery } = this.#parts;
    if (delivery.holding && !session.running) delivery.releaseHeld();
  }

  /**
   * `restart`: stop reading, leaving the process running for the next bridge to adopt. `shutdown`: also
   * stop the process (SIGTERM, grace, SIGKILL) and clear its record; the session id stays, so the next
   * message resumes the conversation (`--resume`).
   */
  async stop(kind: 'restart' | 'shutdown'): Promise<void> {
    this.#stopped = true;
    this.#watcher?.close();
    const started = this.#started;
    if (started) {
      started.limit.stop();
      started.tail.stop();
      await started.files.stop();
      await started.supervisor.stop(kind, this.#options.stopGraceMs);
      if (kind === 'shutdown') {
        started.session.state.exited = true;
        delete started.session.state.reported;
      }
      this.#persist(true);
    }
    this.#reader?.close();
  }

  /** The Claude sessions this conversation holds as its own (`/resume` elsewhere never lists them). */
  readonly ownSessions = (): string[] => ownSessions(this.#parts.session.state);

  /** The conversation as `/sessions` lists it. */
  info(): SessionInfo {
    const { session, supervisor, snapshot } = this.#parts;
    const s = session.state;
    const pid = supervisor.pid();
    const route = this.#options.route ?? s.turn?.route ?? s.lastRoute ?? { chatId: 0 };
    return {
      route,
      ...(snapshot.name !== undefined ? { name: snapshot.name } : {}),
      live: this.live,
      state: supervisor.unknown ? 'unknown' : this.live ? session.agentState() : 'idle',
      ...(s.turn && s.turn.commandId === undefined ? { turnId: s.turn.id } : {}),
      queued: this.queued,
      costUsd: s.costUsd ?? 0,
      ...(this.live && pid !== undefined ? { pid } : {}),
      ...(s.sessionId !== undefined ? { sessionId: s.sessionId } : {}),
      ...(s.model !== undefined ? { model: s.model } : {}),
      ...(snapshot.lastActiveAt !== undefined ? { lastActiveAt: snapshot.lastActiveAt } : {}),
    };
  }

  /** What `status()` reports for this conversation. */
  status(): { state: SessionInfo['state']; pid?: number; sessionId?: string; detail?: string } {
    const { session, supervisor } = this.#parts;
    const pid = supervisor.pid();
    const detail = supervisor.detail;
    const sessionId = session.state.sessionId;
    const state = supervisor.unknown
      ? 'unknown'
      : this.live || detail !== undefined
        ? session.agentState()
        : 'idle';
    return {
      state,
      ...(pid !== undefined ? { pid } : {}),
      ...(sessionId !== undefined ? { sessionId } : {}),
      ...(detail !== undefined ? { detail } : {}),
    };
  }

  /** The gateway's answer to a file this conversation sent (ignored when the id is not its own). */
  settleFile(frame: FrameOf<'file_sent'>): void {
    this.#started?.files.settle(frame);
  }

  /** Emits frames for this conversation (no source tag). */
  emit(frames: AppFrame[]): void {
    this.#parts.sink.emit(frames);
  }

  /** A status frame answering `commandId` for a conversation not live right now. */
  statusFrame(commandId: string): FrameOf<'status'> {
    return this.#parts.session.statusFrame({
      commandId,
      state: this.live ? this.#parts.session.agentState() : 'idle',
    });
  }

  /**
   * Before a line goes to the CLI: if the recorded process has died since the last check, handle the exit
   * now (report it, clear the record), so the line goes to a new process instead of a dead pipe.
   */
  #noticeExit(): Liveness | undefined {
    const record = this.#parts.snapshot.child;
    if (!record) return undefined;
    const state = liveness(record);
    if (state !== 'dead') return state;
    this.pump();
    return this.#parts.snapshot.child === undefined ? undefined : liveness(this.#parts.snapshot.child);
  }

  #openStdout(offset: number): StdoutReader {
    return new StdoutReader(join(this.#options.dir, STDOUT_LOG), offset, this.#options.maxLineBytes);
  }

  #persist(force: boolean, snapshot: Snapshot = this.#parts.snapshot): void {
    this.#snapshotFile.save(snapshot, force);
    // The snapshot's offset is the one on disk (it is captured only when written); the reader's is lower
    // only for a moment after a new process truncated the log.
    if (this.#reader) this.#trimmer.recorded(Math.min(snapshot.stdoutOffset, this.#reader.offset));
  }

  /** The snapshot and parts, for what only a started conversation is asked. */
  get #parts(): Started {
    if (!this.#started) throw new Error(`conversation ${this.key} was used before start(): start it first`);
    return this.#started;
  }
}
