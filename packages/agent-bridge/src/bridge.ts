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
 * those whose source tag the outbox already holds are not sent again.
 *
 * Exactly once into the CLI: a gateway command is acknowledged only after `onFrame` returns, and its key
 * is recorded (with the intent) before the write. Every `user` line (messages and `/clear`, `/compact`)
 * carries a fresh `uuid`, kept in the intent. What 2.1.328 does with it (measured, see the README):
 * - it prints `command_lifecycle` `queued` with `command_uuid` = that uuid on stdout within milliseconds
 *   of *reading* the line — mid-turn too, long before a turn takes a steer — and only for lines that
 *   carry a uuid;
 * - it handles stdin lines in order: that `queued` comes before the answer to a control request written
 *   after the line;
 * - it drops, silently, a line whose uuid it has already taken (queued, taken mid-turn, or finished).
 * A restart that finds an intent settles it from stdout alone (`settleIntent`): the snapshot holding the
 * intent was written before the write, so its stdout offset is before any `queued` for it, and the
 * adoption's replay of stdout from there sees that line if the CLI read it. If not, the bridge writes a
 * fence — the `initialize` it sends after every adoption anyway — and reads on until the fence is
 * answered: a line in the fifo is read before the fence, so a fence answered with no `queued` before it
 * means the line never reached the fifo, and it is written now. If the fence is not answered in time
 * (the CLI busy), the line is written anyway: with the same uuid, the CLI drops it if it had it.
 * Why not the transcript, as before: for a content-array message (what the bridge writes) the
 * `queue-operation enqueue` line has no content, and a steer's text appears only when the running turn
 * takes it — a crash in between made the restarted bridge write the steer again. Why not
 * `--replay-user-messages`: its echo comes when a turn takes the message, not when the CLI reads it.
 * The fifo itself cannot be asked after the fact. Intents recorded by a bridge from before uuids carry
 * the header's `inbound=` marker and are still settled through the transcript (`findMarker`).
 * Control lines (answers, interrupts, model and mode) are assumed written: a duplicate answer does more
 * harm than a lost one, which the `initialize` re-offers.
 *
 * Held commands: a `/clear` or `/compact` that arrives while a turn runs, and every message after it, is
 * kept in the snapshot (`held`) and written only once the CLI is idle — the CLI would otherwise fold later
 * messages into the running turn past the `/clear` (see `session.ts`). Held items are durable like
 * delivered ones (acknowledged only after the snapshot is written) and go through the same intent path
 * when released. If the process exits first, held messages are reported as `messages_unread` and held
 * commands fail with a `command_result`: nothing is dropped silently.
 *
 * Sources: stdout is authoritative for everything live (turns, text, tools, prompts, sub-agent lines
 * with `parent_tool_use_id`, API retries and failures — 2.1.328 prints all of them). Claude's transcript
 * is consulted only for what stdout cannot answer: whether a line written just before a crash was
 * enqueued (`settleIntent`), and the history `/status` shows (the user's side of it is not on stdout;
 * see `history.ts`). A {@link TranscriptTail} follows the current session (the id from `system/init`;
 * a new one after `/clear`) and its sub-agent files; its cursors and the history it builds are written
 * in the same snapshot, so a restarted bridge resumes the tail without skipping or repeating a line.
 *
 * Not taken from the transcript, because stdout already has it (checked on 2.1.328): API errors — each
 * retry is a `system/api_retry` line and a failed turn's `result` carries `api_error_status`; the
 * transcript's `system/api_error` lines say the same. A sub-agent's API retries appear in neither. Sub-agent
 * detail — its `assistant`/`user` lines come on stdout with `parent_tool_use_id`. The sub-agent files are
 * tailed (cursors, idle release) but their lines are passed over unparsed until something needs them.
 *
 * Never two CLIs on one session: a new process is started only when the recorded one is proven dead;
 * when liveness cannot be read, nothing is started and the status is `unknown`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, type FSWatcher, mkdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import {
  type AppFrame,
  createProtocolClient,
  describeError,
  type Endpoint,
  type Logger,
  silentLogger,
} from '@switchyard/protocol';
import { liveness, STDOUT_LOG } from './child.js';
import { FrameSink } from './frame-sink.js';
import { addHistory, type HistoryEntry, historyEntryOf, mayBeHistory } from './history.js';
import { FileChannelStore } from './outbox.js';
import { Session, type Step } from './session.js';
import { type HeldFrame, type Snapshot, SnapshotFile } from './snapshot.js';
import { StdoutReader } from './stdout-reader.js';
import { Supervisor } from './supervisor.js';
import { claudeConfigDir, findMarker, TranscriptTail } from './transcript.js';
import { DEFAULT_MAX_LINE_BYTES, translateLine } from './translator.js';
import { renderSlashCommand, renderUserMessage } from './user-input.js';

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

/** A stage of one stdin write; see {@link BridgeOptions.onDeliveryStage}. */
export type DeliveryStage = 'intent_saved' | 'written' | 'announced';

/** What `status()` reports. */
export interface BridgeStatus {
  state: 'starting' | 'idle' | 'running' | 'compacting' | 'awaiting_input' | 'exited' | 'unknown';
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

const DELIVERED_KEPT = 2000;
/** Bytes of stdout handled per read: bounds the lines (and their parses) alive at once. */
const READ_BUDGET_BYTES = 256 * 1024;
/**
 * How long `settleIntent` waits for the CLI to answer its fence. It answers `initialize` in ~10 ms while
 * idle, streaming or running a tool; past this the line is written anyway (the CLI drops a uuid it took).
 */
const FENCE_TIMEOUT_MS = 10_000;
/**
 * Transcript lines longer than this are skipped. Lower than stdout's cap because each attached file
 * holds a read buffer this size, and the lines history needs (enqueued messages, assistant text) are far
 * shorter; what is skipped is large tool output and images.
 */
const TRANSCRIPT_MAX_LINE_BYTES = 1024 * 1024;
/** The most of a session file read when the tail first meets it (a resumed conversation): its recent end. */
const TRANSCRIPT_BACKLOG_BYTES = 4 * 1024 * 1024;
/** A sub-agent file quiet this long has its watcher and descriptor released (reattached if it grows). */
const SUBAGENT_IDLE_MS = 2 * 60_000;

/** Builds a bridge; nothing starts until `start()`. */
export function createBridge(options: BridgeOptions): Bridge {
  const log = (options.logger ?? silentLogger).child({ component: 'bridge', agent: options.agent });
  const env = options.env ?? process.env;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;

  let snapshot: Snapshot;
  let session: Session;
  let store: FileChannelStore | undefined;
  let endpoint: Endpoint | undefined;
  let sink: FrameSink | undefined;
  let supervisor: Supervisor;
  let reader: StdoutReader | undefined;
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let pumping = false;
  let tail: TranscriptTail | undefined;
  /** The same array as `snapshot.history`. */
  let history: HistoryEntry[] = [];
  /**
   * Set from start until the intent a crash left is settled: its uuid, and whether stdout has shown the
   * CLI reading it. While set, held items stay held (they must not overtake the line being settled).
   */
  let settling: { uuid: string | undefined; queued: boolean } | undefined;

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
          lines = existsSync(reader.path) ? reader.read(READ_BUDGET_BYTES) : [];
        } catch (err) {
          log.error({ err: describeError(err) }, 'could not read stdout');
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
              if (event.kind === 'input_queued' && settling && event.uuid === settling.uuid) {
                settling.queued = true;
                // Saved with the offset that moves past this line (see `Snapshot.intent`).
                if (snapshot.intent) snapshot.intent.read = true;
              }
            }
            const step = session.onEvents(events, Date.now());
            supervisor.writeAll(step.writes);
            emit(step.frames, (index) => [generation, line.end, index]);
          }
          reader.advance(line.end);
          // After the line is handled and the offset moved past it: a snapshot written by a release
          // never makes a restarted bridge handle this line, and so release, again.
          if (snapshot.held?.length && !session.state.running) releaseHeld();
        }
        sink?.flush();
        persist(false);
      }
      // Also here, not only after a line: a bridge restarted with held items next to an idle CLI.
      if (snapshot.held?.length && !session.state.running) releaseHeld();
      if (snapshotFile.dirty) persist(false);
      followSession();
      supervisor.check();
    } finally {
      pumping = false;
    }
  };

  /** Points the tail at the session stdout names (a new id after `/clear`; unset in between). */
  const followSession = (): void => {
    const id = session.state.sessionId;
    if (tail && id !== undefined && id !== tail.sessionId) tail.follow(id);
  };

  /**
   * A main-transcript line: a history entry, if it makes one. The snapshot (throttled) then holds the
   * entry and a cursor past its line together; see {@link TranscriptTail}'s checkpoint contract.
   */
  const onTranscriptLine = (value: Record<string, unknown>): void => {
    const entry = historyEntryOf(value);
    if (!entry) return;
    addHistory(history, entry);
    persist(false);
  };

  // --- commands from the gateway -------------------------------------------------------------------

  const remember = (key: string): void => {
    snapshot.delivered.push(key);
    if (snapshot.delivered.length > DELIVERED_KEPT)
      snapshot.delivered.splice(0, snapshot.delivered.length - DELIVERED_KEPT);
  };

  /**
   * Records the intent, writes the line, sends the frames: the one path every stdin write takes. `uuid`
   * is the line's own (user lines; see the module comment), so a restart can tell whether it was read.
   */
  const deliver = (key: string, line: string, step: Step, uuid?: string): void => {
    remember(key);
    snapshot.intent = { key, line, frames: step.frames, ...(uuid !== undefined ? { uuid } : {}) };
    persist(true);
    options.onDeliveryStage?.('intent_saved', key);
    supervisor.writeLine(line);
    options.onDeliveryStage?.('written', key);
    // Input just went in: silence from here on is what the stuck watchdog measures.
    supervisor.noteActivity();
    supervisor.writeAll(step.writes);
    emit(step.frames, undefined, { key, from: 0 });
    options.onDeliveryStage?.('announced', key);
    delete snapshot.intent;
    persist(false);
  };

  /** Keeps a command or message for later; durable before the gateway's acknowledgement. */
  const hold = (key: string, frame: HeldFrame): void => {
    remember(key);
    snapshot.held = [...(snapshot.held ?? []), frame];
    persist(true);
    log.info({ type: frame.type, held: snapshot.held.length }, 'held behind a running turn');
  };

  /**
   * Writes held items in order while that is safe: a command only into an idle CLI, a message only
   * when no command is still waiting before it (so it lands after the command, in its new conversation).
   */
  const releaseHeld = (): void => {
    if (settling) return;
    const held = snapshot.held ?? [];
    while (held.length > 0 && supervisor.child && !supervisor.unknown) {
      const next = held[0] as HeldFrame;
      if (next.type === 'user_message') {
        held.shift();
        const step = session.acceptUserMessage(next, Date.now());
        const uuid = randomUUID();
        deliver(`in:${next.inboundId}`, renderUserMessage(next, { uuid }), step, uuid);
        continue;
      }
      const step = session.acceptSlashCommand(next.commandId, next.route);
      if (!step) break; // a turn runs: wait for its end
      held.shift();
      const uuid = randomUUID();
      deliver(`cmd:${next.commandId}`, renderSlashCommand(`/${next.type}`, uuid), step, uuid);
    }
    if (held.length === 0) delete snapshot.held;
  };

  /** Reports every held item as not done (the process is gone, or it never started). */
  const dropHeld = (reason: string): void => {
    const held = snapshot.held ?? [];
    if (held.length === 0) return;
    delete snapshot.held;
    const unread = held.flatMap((frame) => (frame.type === 'user_message' ? [frame.inboundId] : []));
    emit([
      ...(unread.length > 0 ? [{ type: 'messages_unread' as const, inboundIds: unread, reason }] : []),
      ...held.flatMap((frame) =>
        frame.type === 'user_message'
          ? []
          : [
              {
                type: 'command_result' as const,
                commandId: frame.commandId,
                ok: false,
                message: `/${frame.type} did not run: ${reason}`,
              },
            ],
      ),
    ]);
    persist(true);
  };

  const onFrame = async (frame: AppFrame): Promise<void> => {
    switch (frame.type) {
      case 'user_message': {
        const key = `in:${frame.inboundId}`;
        if (snapshot.delivered.includes(key)) return;
        if (snapshot.held?.length) {
          hold(key, frame);
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
        const step = session.acceptUserMessage(frame, Date.now());
        const uuid = randomUUID();
        deliver(key, renderUserMessage(frame, { uuid }), step, uuid);
        return;
      }
      case 'permission_answer':
      case 'question_answer': {
        const key = `ans:${frame.requestId}`;
        if (snapshot.delivered.includes(key)) return;
        const step = session.answer(frame);
        if (!step || !supervisor.child) {
          emit([{ type: 'prompt_closed', requestId: frame.requestId, reason: 'cancelled' }]);
          return;
        }
        const [line, ...rest] = step.writes;
        if (line !== undefined) deliver(key, line, { frames: step.frames, writes: rest });
        return;
      }
      case 'interrupt':
      case 'set_model':
      case 'set_mode': {
        const key = `cmd:${frame.commandId}`;
        if (snapshot.delivered.includes(key)) return;
        if (!supervisor.child || supervisor.unknown) {
          emit([
            {
              type: 'command_result',
              commandId: frame.commandId,
              ok: false,
              message: 'the Claude process is not running',
            },
          ]);
          return;
        }
        const kind = frame.type;
        const value =
          frame.type === 'set_model' ? frame.model : frame.type === 'set_mode' ? frame.mode : undefined;
        const step = session.control(kind, frame.commandId, value);
        const [line, ...rest] = step.writes;
        if (line !== undefined) deliver(key, line, { frames: step.frames, writes: rest });
        return;
      }
      case 'compact':
      case 'clear': {
        const key = `cmd:${frame.commandId}`;
        if (snapshot.delivered.includes(key)) return;
        if (!supervisor.ensure()) {
          emit([
            {
              type: 'command_result',
              commandId: frame.commandId,
              ok: false,
              message: supervisor.detail ?? 'the Claude process is not running',
            },
          ]);
          return;
        }
        const step = snapshot.held?.length
          ? undefined
          : session.acceptSlashCommand(frame.commandId, frame.route);
        if (!step) {
          hold(key, frame);
          return;
        }
        const uuid = randomUUID();
        deliver(key, renderSlashCommand(`/${frame.type}`, uuid), step, uuid);
        return;
      }
      case 'status_request': {
        // What the CLI flushed since the last watch event, so the answer includes the turn just ended.
        tail?.rescan();
        const p = supervisor.pid();
        const detail = supervisor.detail;
        emit(
          [
            session.statusFrame({
              commandId: frame.commandId,
              ...(supervisor.unknown ? { state: 'unknown' as const } : {}),
              ...(p !== undefined ? { pid: p } : {}),
              ...(detail !== undefined ? { detail } : {}),
            }),
          ].map((frame) =>
            // Copies: a queued frame must not change when the next reply is merged into an entry.
            history.length > 0 ? { ...frame, history: history.map((entry) => ({ ...entry })) } : frame,
          ),
        );
        return;
      }
      default:
        // Bridge-to-gateway frames arriving here are a peer bug; the channel already validated them.
        log.warn({ type: frame.type }, 'ignored a frame meant for the gateway');
        return;
    }
  };

  /**
   * Whether the CLI read the line with this uuid, from stdout alone (see the module comment): `read` if
   * its `queued` is there, `unread` if the fence written here was answered first, `unknown` if the fence
   * was not answered in time or the process went away. Writes the fence (an `initialize`).
   */
  const readByCli = async (uuid: string): Promise<'read' | 'unread' | 'unknown'> => {
    if (settling?.queued) return 'read';
    const fence = session.control('initialize', undefined);
    supervisor.writeAll(fence.writes);
    const deadline = Date.now() + FENCE_TIMEOUT_MS;
    while (
      supervisor.child &&
      !settling?.queued &&
      session.awaitsControl(fence.requestId) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      pump();
    }
    if (settling?.queued) return 'read';
    if (supervisor.child && !session.awaitsControl(fence.requestId)) return 'unread';
    log.warn({ uuid }, 'the Claude process did not answer the delivery fence in time');
    return 'unknown';
  };

  /**
   * Sends the frames of the intent a crash left that the outbox does not hold yet. Before the adoption's
   * replay of stdout: they are what `deliver` sends right after the write, so they come before anything
   * the CLI printed in answer to the line (a `turn_started` before its turn's text) — whether or not the
   * line turns out to have been read, since `settleIntent` makes sure it is.
   */
  const announceIntent = (): void => {
    const intent = snapshot.intent;
    if (!intent) return;
    const sent = store?.lastInbound();
    const prefix = `${intent.key}#`;
    const from = sent?.startsWith(prefix) ? Number(sent.slice(prefix.length)) + 1 : 0;
    emit(intent.frames.slice(from), undefined, { key: intent.key, from });
  };

  /**
   * Settles a write that was in progress when the last bridge died (see the module comment): writes the
   * line again only if the CLI never read it, then clears the intent. Resolves true when it wrote an
   * `initialize` (the fence), so the caller need not write another.
   */
  const settleIntent = async (): Promise<boolean> => {
    const intent = snapshot.intent;
    if (!intent) return false;
    let written = true;
    let fenced = false;
    const child = supervisor.child;
    if (intent.uuid !== undefined && child) {
      const read = await readByCli(intent.uuid);
      fenced = true;
      // `unknown`: written again all the same — the CLI drops a line whose uuid it has taken.
      written = read === 'read';
    } else if (intent.marker !== undefined && child) {
      // An intent from a bridge before uuids: only the transcript can tell (a steer not yet taken is
      // not in it; the reason uuids replaced this).
      const configDir = claudeConfigDir(env);
      written = false;
      for (let i = 0; i < 20 && !written; i++) {
        written = findMarker(configDir, options.workDir, intent.marker);
        if (!written) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    // else: a control response or request. The CLI ignores a duplicate answer less gracefully than a
    // missing one is recovered (the `initialize` re-offers a prompt still pending), so assume it went.
    if (!written && child) {
      log.warn(
        { key: intent.key },
        'a line written before a crash was not seen read by the Claude process; writing it now',
      );
      try {
        child.writeLine(intent.line);
      } catch (err) {
        log.error({ err: describeError(err) }, 'could not write the recovered message');
      }
    }
    log.info({ key: intent.key, rewritten: !written }, 'settled a write from before a crash');
    delete snapshot.intent;
    persist(true);
    return fenced;
  };

  return {
    async start() {
      stopped = false;
      mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
      snapshot = snapshotFile.load();
      session = new Session(snapshot.session);
      history = snapshot.history ??= [];
      tail = new TranscriptTail({
        configDir: claudeConfigDir(env),
        cwd: options.workDir,
        ...(session.state.sessionId !== undefined ? { sessionId: session.state.sessionId } : {}),
        ...(snapshot.transcript ? { cursors: snapshot.transcript } : {}),
        onLine: (line) => {
          if (line.source === 'main') onTranscriptLine(line.value);
        },
        // Sub-agent lines: nothing here needs them yet (see the module comment), so none is parsed.
        acceptBytes: (line, source) => source === 'main' && mayBeHistory(line),
        onSkipped: (file, bytes) => log.warn({ file, bytes }, 'skipped an oversized transcript line'),
        maxLineBytes: TRANSCRIPT_MAX_LINE_BYTES,
        backlogBytes: TRANSCRIPT_BACKLOG_BYTES,
        idleReleaseMs: SUBAGENT_IDLE_MS,
      });
      store = new FileChannelStore(join(options.stateDir, 'outbox.log'));
      endpoint = createProtocolClient({
        socketPath: options.socketPath,
        agent: options.agent,
        store,
        onFrame,
        logger: log.child({ component: 'channel' }),
        onConnectionChange: (state) => log.info({ connected: state.connected }, 'gateway connection'),
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
            reader = new StdoutReader(join(options.stateDir, STDOUT_LOG), 0, maxLineBytes);
            if (sink) sink.replayUntil = undefined;
          },
          onExited: () => dropHeld('the Claude process exited before it read them'),
        },
      );

      const record = snapshot.child;
      const state = record ? liveness(record) : 'dead';
      if (record && state !== 'dead') {
        // Alive or unknown: never start a second one. Adopt and read on from the recorded offset.
        supervisor.adopt(record, state);
        reader = new StdoutReader(join(options.stateDir, STDOUT_LOG), snapshot.stdoutOffset, maxLineBytes);
        log.info(
          { pid: record.pid, offset: snapshot.stdoutOffset, liveness: state },
          'adopted the Claude process',
        );
        // Before the first read: the replay of stdout from the offset may show the intent's line read.
        if (snapshot.intent && !supervisor.unknown) {
          settling = { uuid: snapshot.intent.uuid, queued: snapshot.intent.read === true };
          announceIntent();
        }
        pump();
        if (!supervisor.unknown) {
          const fenced = await settleIntent().finally(() => {
            settling = undefined;
          });
          // Re-arms prompts the CLI still has open that this side lost (answered by `initialize`); the
          // fence already was one.
          if (!fenced) supervisor.writeAll(session.control('initialize', undefined).writes);
          // Held items waited for the settled line; release them now if the CLI is idle.
          pump();
        }
      } else if (record) {
        // Dead while no bridge watched: read what it said, report the exit, then start anew.
        reader = new StdoutReader(join(options.stateDir, STDOUT_LOG), snapshot.stdoutOffset, maxLineBytes);
        supervisor.adopt(record, state);
        pump();
        delete snapshot.intent;
        if (!supervisor.child && !snapshot.crashLoop) supervisor.spawn();
      } else if (!snapshot.crashLoop) {
        supervisor.spawn();
      }

      // After the adoption's pump: it may have moved the session on.
      tail.start();
      followSession();

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
