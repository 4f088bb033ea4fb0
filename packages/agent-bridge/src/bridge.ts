/**
 * The bridge: one Claude process, one socket to the gateway, and the durable state that lets any bridge
 * process be killed at any moment and the next one carry on.
 *
 * What is kept in the state directory and why:
 * - `bridge.json` (atomic snapshot): the process record, the stdout offset, the session machine's state,
 *   the keys of gateway commands already delivered into the CLI, and an *intent* written just before a
 *   line goes to the CLI's stdin.
 * - `outbox.log` ({@link FileChannelStore}): frames not yet acknowledged, each tagged with the stdout
 *   position (or the inbound command) that produced it.
 *
 * Exactly once towards the gateway: after a restart the bridge restores the snapshot and re-reads stdout
 * from the snapshot's offset. The session machine is deterministic, so it regenerates the same frames;
 * those whose source tag the outbox already holds are not sent again (`frame-sink.ts`).
 *
 * Exactly once into the CLI, and commands held behind a `/clear`: see `delivery.ts`.
 *
 * Sources: stdout is authoritative for everything live. Claude's transcript is consulted only for what
 * stdout cannot answer: the history `/status` shows (`history-tail.ts`), and whether a line written by a
 * bridge from before uuids was enqueued (`delivery.ts`).
 *
 * Never two CLIs on one session: a new process is started only when the recorded one is proven dead;
 * when liveness cannot be read, nothing is started and the status is `unknown` (`supervisor.ts`).
 *
 * This file is the shell that wires the pieces together: the snapshot ({@link SnapshotFile}), the frames
 * out ({@link FrameSink}), the process ({@link Supervisor}), the writes in ({@link Delivery}), the
 * transcript ({@link HistoryTail}), and the one loop that drives them all, `pump`: read stdout, translate,
 * step the session machine, write what it answers, send what it emits, release held items, save.
 */
import { type FSWatcher, mkdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import {
  type AgentState,
  type AppFrame,
  createProtocolClient,
  describeError,
  type Endpoint,
  type Logger,
  silentLogger,
} from '@switchyard/protocol';
import { liveness, STDOUT_LOG } from './child.js';
import { createCommandHandler } from './commands.js';
import { Delivery, type DeliveryStage } from './delivery.js';
import { FrameSink } from './frame-sink.js';
import { HistoryTail } from './history-tail.js';
import { FileChannelStore } from './outbox.js';
import { Session } from './session.js';
import { type Snapshot, SnapshotFile } from './snapshot.js';
import { StdoutReader } from './stdout-reader.js';
import { Supervisor } from './supervisor.js';
import { claudeConfigDir } from './transcript.js';
import { DEFAULT_MAX_LINE_BYTES, translateLine } from './translator.js';

/** Options of {@link createBridge}; the cli maps the agent's config onto them. */
export interface BridgeOptions {
  /** The agent's name, as the gateway knows it (checked in the handshake). */
  agent: string;
  /** The gateway's Unix socket. */
  socketPath: string;
  /** Where the bridge keeps its state: fifo, logs, snapshot, outbox. Created (0700) if missing. */
  stateDir: string;
  /** The agent's working directory (absolute); the CLI runs there. */
  workDir: string;
  /** The `claude` binary: an absolute path, or a name looked up on `PATH`. */
  claudeBin: string;
  /** Extra arguments appended to the CLI's command line. */
  claudeArgs?: readonly string[];
  /** The CLI's environment (default: this process's); `CLAUDE_CONFIG_DIR` in it locates transcripts. */
  env?: NodeJS.ProcessEnv;
  model?: string;
  permissionMode?: string;
  /** Path of an MCP config file passed as `--mcp-config`. */
  mcpConfig?: string;
  /** Start a new process (with `--resume`) when it exits by itself. */
  restartOnExit: boolean;
  /** A running turn with no output for this long is reported as stuck. */
  stuckAfterMs: number;
  logger?: Logger;
  /** More than `maxExits` exits within `windowMs` is a crash loop: reported, not restarted. */
  crashLoop?: { maxExits: number; windowMs: number };
  /** SIGTERM → SIGKILL grace on a real shutdown (default 5000 ms). */
  stopGraceMs?: number;
  /** Stdout lines longer than this are skipped unparsed (default 2 MiB). */
  maxLineBytes?: number;
  /**
   * Fault injection for tests: called synchronously at each stage of a stdin write, so a test can kill
   * the process exactly there (`test/bridge-entry.mjs`). Stages: `intent_saved` (the intent is on disk,
   * nothing written), `written` (the line is in the fifo, its frames not sent), `announced` (frames in
   * the outbox, the intent not yet cleared). Leave unset in production.
   */
  onDeliveryStage?: (stage: DeliveryStage, key: string) => void;
}

/** What `status()` reports. */
export interface BridgeStatus {
  state: AgentState;
  pid?: number;
  sessionId?: string;
  connected: boolean;
  detail?: string;
}

/** The bridge's lifecycle handle. */
export interface Bridge {
  /** Adopts or starts the process and starts connecting to the gateway. Resolves once reading has begun. */
  start(): Promise<void>;
  /**
   * `restart`: stop reading and disconnect, leaving the process running for the next bridge to adopt.
   * `shutdown`: also stop the process (SIGTERM, grace, SIGKILL) and clear its record.
   */
  stop(kind: 'restart' | 'shutdown'): Promise<void>;
  status(): BridgeStatus;
}

/** Bytes of stdout handled per read: bounds the lines (and their parses) alive at once. */
const READ_BUDGET_BYTES = 256 * 1024;

/** Builds a bridge; nothing starts until `start()`. */
export function createBridge(options: BridgeOptions): Bridge {
  const log = (options.logger ?? silentLogger).child({ component: 'bridge', agent: options.agent });
  const env = options.env ?? process.env;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  /** The process's stdout log, read from `offset` (0 for a process just started). */
  const openStdout = (offset: number): StdoutReader =>
    new StdoutReader(join(options.stateDir, STDOUT_LOG), offset, maxLineBytes);

  let snapshot: Snapshot;
  let session: Session;
  let store: FileChannelStore | undefined;
  let endpoint: Endpoint | undefined;
  let sink: FrameSink | undefined;
  let supervisor: Supervisor;
  let delivery: Delivery;
  let commands: (frame: AppFrame) => Promise<void>;
  let reader: StdoutReader | undefined;
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let pumping = false;
  let tail: HistoryTail | undefined;

  const snapshotFile = new SnapshotFile(options.stateDir, (snapshot) => {
    snapshot.session = session.state;
    snapshot.stdoutOffset = reader?.offset ?? snapshot.stdoutOffset;
    if (tail) snapshot.transcript = tail.checkpoint();
  });
  const persist = (force: boolean): void => snapshotFile.save(snapshot, force);

  /** Hands frames to the gateway (see {@link FrameSink.emit}); nothing before `start()`. */
  const emit: FrameSink['emit'] = (frames, tag, inbound) => sink?.emit(frames, tag, inbound);

  /** Reads and handles every complete stdout line available, then checks liveness. */
  const pump = (): void => {
    if (pumping || stopped || !reader) return;
    pumping = true;
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
        const generation = session.state.generation;
        for (const line of lines) {
          if (line.text === undefined) {
            log.warn({ bytes: line.bytes }, 'skipped an oversized stdout line');
          } else if (line.text.trim() !== '') {
            const events = translateLine(line.text, line.bytes, maxLineBytes);
            for (const event of events) {
              if (event.kind === 'skipped')
                log.warn({ bytes: event.bytes, reason: event.reason }, 'skipped a stdout line');
              if (event.kind === 'input_queued') delivery.noteQueued(event.uuid);
            }
            const step = session.onEvents(events, Date.now());
            supervisor.writeAll(step.writes);
            emit(step.frames, (index) => [generation, line.end, index]);
          }
          reader.advance(line.end);
          // After the line is handled and the offset moved past it: a snapshot written by a release
          // never makes a restarted bridge handle this line, and so release, again.
          if (delivery.holding && !session.running) delivery.releaseHeld();
        }
        sink?.flush();
        persist(false);
      }
      // Also here, not only after a line: a bridge restarted with held items next to an idle CLI.
      if (delivery.holding && !session.running) delivery.releaseHeld();
      if (snapshotFile.dirty) persist(false);
      tail?.follow(session.state.sessionId);
      supervisor.check();
    } finally {
      pumping = false;
    }
  };

  /** A frame from the gateway: see `commands.ts`. Acknowledged once this resolves. */
  const onFrame = (frame: AppFrame): Promise<void> => commands(frame);

  return {
    async start() {
      stopped = false;
      mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
      snapshot = snapshotFile.load();
      const configDir = claudeConfigDir(env);
      session = new Session(snapshot.session);
      snapshot.history ??= [];
      tail = new HistoryTail({
        configDir,
        workDir: options.workDir,
        sessionId: session.state.sessionId,
        cursors: snapshot.transcript,
        history: snapshot.history,
        onEntry: () => persist(false),
        log,
      });
      store = new FileChannelStore(join(options.stateDir, 'outbox.log'));
      endpoint = createProtocolClient({
        socketPath: options.socketPath,
        agent: options.agent,
        store,
        onFrame,
        logger: log.child({ component: 'channel' }),
        onConnectionChange: (state) => log.info({ connected: state.connected }, 'gateway connection'),
        onRefused: (r) =>
          log.warn(
            { event: 'frame_skipped', direction: r.direction, seq: r.seq, type: r.frameType, code: r.code },
            'the channel skipped a frame its receiver refused',
          ),
      });
      sink = new FrameSink(endpoint, store, log, store.lastSource());
      supervisor = new Supervisor(
        {
          stateDir: options.stateDir,
          workDir: options.workDir,
          claudeBin: options.claudeBin,
          claudeArgs: options.claudeArgs,
          env,
          model: options.model,
          permissionMode: options.permissionMode,
          mcpConfig: options.mcpConfig,
          restartOnExit: options.restartOnExit,
          stuckAfterMs: options.stuckAfterMs,
          crashLoop: options.crashLoop ?? { maxExits: 3, windowMs: 60_000 },
          log,
        },
        {
          snapshot,
          session,
          emit,
          persist,
          onStarted: () => {
            reader?.close();
            reader = openStdout(0);
            if (sink) sink.replayUntil = undefined;
          },
          onExited: () => delivery.dropHeld('the Claude process exited before it read them'),
        },
      );
      delivery = new Delivery(
        {
          configDir,
          workDir: options.workDir,
          log,
          onStage: options.onDeliveryStage,
        },
        {
          snapshot,
          session,
          supervisor,
          emit,
          persist,
          pump: () => pump(),
          lastInbound: () => store?.lastInbound(),
        },
      );
      commands = createCommandHandler({ session, supervisor, delivery, history: tail, emit, log });

      const record = snapshot.child;
      const state = record ? liveness(record) : 'dead';
      if (record && state !== 'dead') {
        // Alive or unknown: never start a second one. Adopt and read on from the recorded offset.
        supervisor.adopt(record, state);
        reader = openStdout(snapshot.stdoutOffset);
        log.info(
          { pid: record.pid, offset: snapshot.stdoutOffset, liveness: state },
          'adopted the Claude process',
        );
        // Before the first read: the replay of stdout from the offset may show the intent's line read.
        if (!supervisor.unknown) delivery.beginSettle();
        pump();
        if (!supervisor.unknown) {
          const fenced = await delivery.settle();
          // Re-arms prompts the CLI still has open that this side lost (answered by `initialize`); the
          // fence already was one.
          if (!fenced) supervisor.writeAll(session.control('initialize', undefined).writes);
          // Held items waited for the settled line; release them now if the CLI is idle.
          pump();
        }
      } else if (record) {
        // Dead while no bridge watched: read what it said, report the exit, then start anew.
        reader = openStdout(snapshot.stdoutOffset);
        supervisor.adopt(record, state);
        pump();
        delete snapshot.intent;
        if (!supervisor.child && !snapshot.crashLoop) supervisor.spawn();
      } else if (!snapshot.crashLoop) {
        supervisor.spawn();
      }

      // After the adoption's pump: it may have moved the session on.
      tail.start();
      tail.follow(session.state.sessionId);

      watcher = watch(options.stateDir, (_event, name) => {
        if (name === STDOUT_LOG) pump();
      });
      watcher.on('error', (err) => log.warn({ err: describeError(err) }, 'state directory watch failed'));
      // The backstop for missed watch events, and the liveness and stuck checks.
      timer = setInterval(pump, 500);
      await endpoint.start();
    },

    async stop(kind) {
      stopped = true;
      if (timer) clearInterval(timer);
      watcher?.close();
      tail?.stop();
      await supervisor?.stop(kind, options.stopGraceMs ?? 5000);
      if (snapshot) persist(true);
      await endpoint?.stop();
      reader?.close();
      store?.close();
    },

    status() {
      const p = supervisor.pid();
      const detail = supervisor.detail;
      const state: BridgeStatus['state'] = !session
        ? 'starting'
        : supervisor.unknown
          ? 'unknown'
          : session.agentState();
      return {
        state,
        connected: endpoint?.connected ?? false,
        ...(p !== undefined ? { pid: p } : {}),
        ...(session?.state.sessionId !== undefined ? { sessionId: session.state.sessionId } : {}),
        ...(detail !== undefined ? { detail } : {}),
      };
    },
  };
}
