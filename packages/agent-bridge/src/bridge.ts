/**
 * The bridge: one socket to the gateway, one durable outbox, and a Claude session per conversation (a
 * chat, or a forum topic; or one for the whole agent with `conversations: shared`). Each conversation is
 * a {@link Conversation} with its own process, state directory and restart contract; this file is the
 * wiring around them:
 *
 * - **Routing.** Every gateway frame that belongs to a conversation names it (its `route`); answers to
 *   prompts are routed by their request id to the conversation that opened the prompt.
 * - **Slots.** At most `maxLiveSessions` processes run (`core/pool.ts`). A conversation that needs one when
 *   all are taken stops the least recently used idle one (resumed later with `--resume`), or waits: its
 *   messages are kept in `waiting.json` (durable before they are acknowledged), the chat is told
 *   (`session_waiting`), and they are served in arrival order as slots free up — never dropped.
 * - **Idle stop.** A process idle for `idleStopMs` is stopped; the next message resumes it.
 * - **Adoption.** On start every conversation with a recorded process is restored and its process
 *   adopted (or its exit reported).
 *
 * Operations on the pool (a frame, the periodic tick) run one at a time (`#exclusive`): a conversation
 * is opened, served or stopped by exactly one of them.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type AgentState,
  type AppFrame,
  type Clock,
  conversationKey,
  createProtocolClient,
  describeError,
  type Endpoint,
  type ExchangeOptions,
  type Logger,
  lockStateDir,
  prepareExchange,
  type Route,
  type SessionInfo,
  type StateLock,
  silentLogger,
  systemClock,
  type TimerHandle,
} from '@switchyard/protocol';
import { Conversation, type ConversationSettings } from './conversation.js';
import {
  arrival,
  idleExpired,
  nextToServe,
  planSlot,
  type StartingFrame,
  withoutMessagesOf,
} from './core/pool.js';
import { conversationFailed, type Failure, mayRetry } from './core/process-policy.js';
import type { DeliveryStage } from './delivery.js';
import type { FilesConfig } from './file-tools.js';
import { FileChannelStore, writeFileAtomic } from './outbox.js';
import type { PermissionPolicy } from './permission-policy.js';
import { readSnapshot, SNAPSHOT_FILE } from './snapshot.js';
import { DEFAULT_MAX_LINE_BYTES } from './translator.js';

/** Options of {@link createBridge}; the cli maps the agent's config onto them. */
export interface BridgeOptions {
  /** The agent's name, as the gateway knows it (checked in the handshake). */
  agent: string;
  /** The gateway's Unix socket. */
  socketPath: string;
  /** Where the bridge keeps its state: the outbox, and a directory per conversation. Created (0700). */
  stateDir: string;
  /** The agent's working directory (absolute); the CLI runs there unless a conversation overrides it. */
  workDir: string;
  /** The `claude` binary: an absolute path, or a name looked up on `PATH`. */
  claudeBin: string;
  /** Extra arguments appended to the CLI's command line. */
  claudeArgs?: readonly string[];
  /** The CLI's environment (default: this process's); `CLAUDE_CONFIG_DIR` in it locates transcripts. */
  env?: NodeJS.ProcessEnv;
  model?: string;
  permissionMode?: string;
  /** Which modes conversations may use and how far "always allow" reaches (`permission-policy.ts`). */
  permissions?: PermissionPolicy;
  /** Path of an MCP config file passed as `--mcp-config`. */
  mcpConfig?: string;
  /** The file tools (`send_file`, `send_photo`, `send_files`): on unless `enabled: false`. */
  files?: FilesConfig;
  /**
   * Where files cross to and from the gateway (protocol's `exchange.ts`): a file the agent sends is
   * copied here before its `file_send`. The gateway must be given the same directory. Default
   * `<stateDir>/files`, for one user only.
   */
  exchange?: ExchangeOptions;
  /** `per-chat` (default): each chat and forum topic is its own session. `shared`: one for the agent. */
  conversations?: 'per-chat' | 'shared';
  /** A conversation's own working directory, model, permission mode or name (config overrides). */
  settingsFor?: (route: Route) => Partial<ConversationSettings>;
  /** Claude processes kept at most (default 4; each costs ~170 MB). */
  maxLiveSessions?: number;
  /** A process idle this long is stopped and resumed at the next message (default 30 min). */
  idleStopMs?: number;
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
   * the process exactly there (`tests/bridge/bridge-entry.mjs`). Stages: `intent_saved` (the intent is on disk,
   * nothing written), `written` (the line is in the fifo, its frames not sent), `announced` (frames in
   * the outbox, the intent not yet cleared). Leave unset in production.
   */
  onDeliveryStage?: (stage: DeliveryStage, key: string) => void;
  /**
   * Time for every timer and timestamp of the bridge (the pool's tick, idle stops, restart backoff, the
   * stuck watchdog, delivery's fence, the channel's pings and reconnects); default `systemClock`.
   */
  clock?: Clock;
}

/** What `status()` reports. */
export interface BridgeStatus {
  /** The busiest state of any conversation (`idle` when none is live). */
  state: AgentState;
  connected: boolean;
  /** Every conversation with an object in memory (live, or served since the bridge started). */
  sessions: (SessionInfo & { key: string; detail?: string })[];
  /** The pid of the only live process, when exactly one is live (tests and `/status` of one chat). */
  pid?: number;
  sessionId?: string;
  detail?: string;
}

/** The bridge's lifecycle handle. */
export interface Bridge {
  /** Migrates old state, adopts every recorded process and starts connecting. */
  start(): Promise<void>;
  /**
   * `restart`: stop reading and disconnect, leaving the processes running for the next bridge to adopt.
   * `shutdown`: also stop every process (SIGTERM, grace, SIGKILL) and clear their records.
   */
  stop(kind: 'restart' | 'shutdown'): Promise<void>;
  status(): BridgeStatus;
}

/** The conversations' parent directory inside the state directory. */
export const CONVERSATIONS_DIR = 'conversations';
/** The key of the one session of an agent with `conversations: shared`. */
export const SHARED_KEY = 'shared';
/** Durable queue of frames waiting for a process slot. */
const WAITING_FILE = 'waiting.json';
/** How often the pool checks liveness, idle processes and waiting conversations. */
const TICK_MS = 500;

/** A conversation's directory name: the key with characters a shell would trip on replaced. */
export function conversationDir(key: string): string {
  return `c${key.replace(/:/g, '_t')}`;
}

/** The frame types that may need a process for a conversation that has none (`StartingFrame`). */
const STARTS_PROCESS = new Set<AppFrame['type']>([
  'user_message',
  'set_model',
  'set_mode',
  'compact',
  'clear',
]);

/** Builds a bridge; nothing starts until `start()`. */
export function createBridge(options: BridgeOptions): Bridge {
  const log = (options.logger ?? silentLogger).child({ component: 'bridge', agent: options.agent });
  const clock = options.clock ?? systemClock;
  const env = options.env ?? process.env;
  const shared = options.conversations === 'shared';
  const maxLive = Math.max(1, options.maxLiveSessions ?? 4);
  const idleStopMs = options.idleStopMs ?? 30 * 60_000;
  const keyOf = (route: Route): string => (shared ? SHARED_KEY : conversationKey(route));
  const keyOfFrame = (frame: StartingFrame): string => keyOf(frame.route);
  const exchange = options.exchange ?? { dir: join(options.stateDir, 'files') };
  const dirOf = (key: string): string => join(options.stateDir, CONVERSATIONS_DIR, conversationDir(key));
  const waitingPath = join(options.stateDir, WAITING_FILE);

  const conversations = new Map<string, Conversation>();
  /**
   * Processes being stopped to free a slot (or for idleness), by conversation: their slots are not free
   * yet, and their conversations are not opened again until they are gone (see `open`).
   */
  const stopping = new Map<string, Promise<void>>();
  let waiting: StartingFrame[] = [];
  let store: FileChannelStore | undefined;
  /** Held from the first thing `start()` does to the last thing `stop()` does. */
  let lock: StateLock | undefined;
  let endpoint: Endpoint | undefined;
  let timer: TimerHandle | undefined;
  let stopped = false;
  let chain: Promise<unknown> = Promise.resolve();
  /**
   * Conversations whose opening or serving threw, until one works again: their frames wait (blocked)
   * until the failure's retry time, and the tick tries them again (`core/process-policy.ts`). `route` is
   * where the failure is reported.
   */
  const failures = new Map<string, { failure: Failure; route: Route | undefined }>();

  /** Runs pool operations one at a time, in call order; a failure is logged and does not break the chain. */
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work);
    chain = next.catch((err: unknown) => log.error({ err: describeError(err) }, 'bridge operation failed'));
    return next;
  };
  /** {@link exclusive} for work nobody awaits: its failure is logged by the chain, and goes no further. */
  const background = (work: () => Promise<unknown>): void => {
    exclusive(work).catch(() => {});
  };

  /** Conversations backing off after a failure: their frames wait, whatever the slots. */
  const blocked = (): ReadonlySet<string> => {
    const now = clock.now();
    return new Set([...failures].filter(([, f]) => !mayRetry(f.failure, now)).map(([key]) => key));
  };

  /**
   * `key` failed (its opening, a frame, or a read of its output threw): the object is dropped (its
   * process left running, for the next open to adopt), the conversation backs off, and its chat is told
   * the first time. Nothing of it reaches the other conversations or the bridge process.
   */
  const fail = (key: string, route: Route | undefined, err: unknown, broken?: Conversation): void => {
    const reason = describeError(err);
    const { failure, report } = conversationFailed(failures.get(key)?.failure, reason, clock.now());
    failures.set(key, { failure, route });
    const retryInMs = failure.retryAt - clock.now();
    log.error(
      { conversation: key, err: reason, failures: failure.failures, retryInMs },
      'a conversation failed; the others go on, and it is tried again later',
    );
    const current = broken ?? conversations.get(key);
    if (current && conversations.get(key) === current) retire(current, 'it failed', 'restart');
    if (report && route) {
      endpoint
        ?.send({
          type: 'operator_event',
          kind: 'conversation_failed',
          route,
          message:
            `This conversation could not be opened (${reason.slice(0, 1000)}). Its messages are kept and it ` +
            'is tried again every few seconds; other chats are not affected. See the bridge’s log for the cause.',
        })
        .catch(() => {});
    }
  };

  /** {@link open}, with a failure made the conversation's own ({@link fail}): `undefined` then. */
  const tryOpen = async (key: string, route: Route | undefined): Promise<Conversation | undefined> => {
    try {
      return await open(key, route);
    } catch (err) {
      fail(key, route, err);
      return undefined;
    }
  };

  const saveWaiting = (): void => writeFileAtomic(waitingPath, JSON.stringify(waiting));

  const settingsOf = (route: Route | undefined): ConversationSettings => ({
    workDir: options.workDir,
    model: options.model,
    permissionMode: options.permissionMode,
    permissions: options.permissions,
    ...(route && options.settingsFor ? definedOnly(options.settingsFor(route)) : {}),
  });

  /** The conversation's object, created (its state restored, a recorded process adopted) if needed. */
  const open = async (key: string, route: Route | undefined): Promise<Conversation> => {
    const existing = conversations.get(key);
    if (existing) return existing;
    // A new object adopts the process its snapshot records: never the one still being stopped, which
    // would take the frame and then die with it.
    await stopping.get(key);
    const reopened = conversations.get(key);
    if (reopened) return reopened;
    if (!store || !endpoint) throw new Error('the bridge is not started');
    const conversation = new Conversation({
      key,
      route: shared ? undefined : route,
      dir: dirOf(key),
      settings: settingsOf(shared ? undefined : route),
      claudeBin: options.claudeBin,
      claudeArgs: options.claudeArgs,
      env,
      mcpConfig: options.mcpConfig,
      files: options.files,
      exchange,
      restartOnExit: options.restartOnExit,
      stuckAfterMs: options.stuckAfterMs,
      crashLoop: options.crashLoop ?? { maxExits: 3, windowMs: 60_000 },
      stopGraceMs: options.stopGraceMs ?? 5000,
      maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      log,
      clock,
      endpoint,
      store,
      mayStart: () => slotFor(key) === 'free',
      onSettled: () => background(drain),
      onFailure: (err) => background(async () => fail(key, conversation.route ?? route, err, conversation)),
      onDeliveryStage: options.onDeliveryStage,
    });
    conversations.set(key, conversation);
    try {
      await conversation.start();
    } catch (err) {
      // Half started: let go of what it opened; its process (if one is recorded) stays for the next try.
      conversations.delete(key);
      await conversation.stop('restart').catch(() => {});
      throw err;
    }
    return conversation;
  };

  /**
   * Forgets the object and stops its process (`shutdown`), or only lets go of it (`restart`: the next
   * open adopts it); the conversation is not opened again, nor its slot free, until that is done.
   */
  const retire = (
    conversation: Conversation,
    why: string,
    kind: 'restart' | 'shutdown' = 'shutdown',
  ): void => {
    conversations.delete(conversation.key);
    log.info({ conversation: conversation.key, why, kind }, 'stopping a conversation’s Claude process');
    const done = conversation
      .stop(kind)
      .catch((err: unknown) => log.error({ err: describeError(err) }, 'could not stop a Claude process'))
      .finally(() => {
        stopping.delete(conversation.key);
        background(drain);
      });
    stopping.set(conversation.key, done);
  };

  /** Whether `key` may start a process now; evicts the least recently used idle one when that helps. */
  const slotFor = (key: string): 'free' | 'wait' | 'busy' => {
    const views = [...conversations.values()].map((c) => ({
      key: c.key,
      live: c.live,
      evictable: c.evictable,
      lastActiveAt: c.lastActiveAt,
    }));
    const plan = planSlot(views, maxLive, key, stopping.size);
    if (plan.kind === 'free') return 'free';
    if (plan.kind === 'evict') {
      const victim = conversations.get(plan.key);
      if (victim) retire(victim, `a slot for conversation ${key}`);
      return 'wait';
    }
    return plan.stopping ? 'wait' : 'busy';
  };

  /**
   * Hands a frame that may start a process to its conversation (`served`), or queues it: for a slot
   * (`waiting`), or because the conversation failed (`failed`: it waits out its backoff).
   */
  const serve = async (
    frame: StartingFrame,
    fromQueue: boolean,
  ): Promise<'served' | 'waiting' | 'failed'> => {
    const key = keyOf(frame.route);
    const failed = (): 'failed' => {
      if (!fromQueue) {
        waiting.push(frame);
        saveWaiting();
      }
      return 'failed';
    };
    const conversation = await tryOpen(key, frame.route);
    if (!conversation) return failed();
    if (!conversation.live) {
      const slot = slotFor(key);
      if (slot !== 'free') {
        if (fromQueue) return 'waiting';
        waiting.push(frame);
        saveWaiting();
        if (frame.type === 'user_message' && slot === 'busy') {
          conversation.emit([
            {
              type: 'session_waiting',
              route: frame.route,
              inboundIds: [frame.inboundId],
              position: waiting.length - 1,
            },
          ]);
        }
        log.info({ conversation: key, waiting: waiting.length }, 'waiting for a free Claude process');
        return 'waiting';
      }
    }
    try {
      await conversation.handle(frame);
    } catch (err) {
      fail(key, frame.route, err, conversation);
      return failed();
    }
    failures.delete(key);
    return 'served';
  };

  /** Serves waiting frames in arrival order while slots allow. */
  const drain = async (): Promise<void> => {
    for (let index = nextToServe(waiting, keyOfFrame, blocked()); index !== undefined && !stopped; ) {
      const next = waiting[index] as StartingFrame;
      const outcome = await serve(next, true);
      if (outcome === 'waiting') return;
      if (outcome === 'served') {
        waiting = waiting.filter((w) => w !== next);
        saveWaiting();
      }
      index = nextToServe(waiting, keyOfFrame, blocked());
    }
  };

  /** A frame from the gateway; acknowledged once this resolves (see `commands.ts` for each type). */
  const onFrame = (frame: AppFrame): Promise<void> =>
    exclusive(async () => {
      if (STARTS_PROCESS.has(frame.type)) {
        const starting = frame as StartingFrame;
        const next = arrival(waiting, starting, keyOfFrame, blocked());
        if (next === 'queue') {
          waiting = [...waiting, starting];
          saveWaiting();
        } else if (next === 'serve') {
          await serve(starting, false);
        }
        return;
      }
      switch (frame.type) {
        case 'file_sent':
          // Only the conversation whose outbox holds the file knows its id; the others ignore it.
          for (const conversation of conversations.values()) conversation.settleFile(frame);
          return;
        case 'permission_answer':
        case 'question_answer': {
          const owner = [...conversations.values()].find((c) => c.hasPrompt(frame.requestId));
          if (owner) {
            try {
              await owner.handle(frame);
              return;
            } catch (err) {
              // The prompt is re-offered when the conversation is adopted again (`initialize`).
              fail(owner.key, owner.route, err, owner);
            }
          }
          // Gone (answered, cancelled, or its process stopped): the gateway shows it expired.
          endpoint
            ?.send({ type: 'prompt_closed', requestId: frame.requestId, reason: 'cancelled' })
            .catch(() => {});
          return;
        }
        case 'interrupt':
        case 'status_request':
        case 'rename': {
          const key = keyOf(frame.route);
          const conversation = await tryOpen(key, frame.route);
          try {
            if (!conversation) throw new Error(failures.get(key)?.failure.reason ?? 'it failed');
            if (frame.type === 'status_request' && !conversation.live) {
              conversation.emit([conversation.statusFrame(frame.commandId)]);
              return;
            }
            await conversation.handle(frame);
          } catch (err) {
            if (conversation) fail(key, frame.route, err, conversation);
            const message = `This conversation could not be opened (${describeError(err).slice(0, 1000)}); try again shortly.`;
            endpoint
              ?.send({ type: 'command_result', commandId: frame.commandId, ok: false, message })
              .catch(() => {});
          }
          return;
        }
        case 'stop_session': {
          const key = keyOf(frame.route);
          const conversation = conversations.get(key);
          const before = waiting.length;
          waiting = withoutMessagesOf(waiting, key, keyOfFrame);
          if (waiting.length !== before) saveWaiting();
          const result = (ok: boolean, message: string): void =>
            void endpoint
              ?.send({ type: 'command_result', commandId: frame.commandId, ok, message })
              .catch(() => {});
          if (!conversation?.live) {
            if (conversation) retire(conversation, 'asked to stop');
            result(true, 'No Claude process was running for this conversation.');
          } else if (!conversation.evictable) {
            result(false, 'This conversation is busy (a turn, a prompt or a command). Send /stop first.');
          } else {
            retire(conversation, 'asked to stop');
            result(true, 'Stopped this conversation’s Claude process; your next message resumes it.');
          }
          return;
        }
        case 'sessions_request': {
          endpoint
            ?.send({ type: 'sessions', commandId: frame.commandId, sessions: listSessions() })
            .catch(() => {});
          return;
        }
        default:
          log.warn({ type: frame.type }, 'ignored a frame meant for the gateway');
      }
    });

  /** Every conversation this agent has: the live ones from memory, the others from their snapshots. */
  const listSessions = (): SessionInfo[] => {
    const list: SessionInfo[] = [...conversations.values()].map((c) => c.info());
    const seen = new Set(conversations.keys());
    for (const { key, info } of storedConversations()) {
      if (!seen.has(key)) list.push(info);
    }
    return list.slice(0, 1000);
  };

  /**
   * Conversations on disk, read from their snapshots (no process, no object); `recorded` when the
   * snapshot records a process (to adopt, or whose exit to report).
   */
  const storedConversations = (): { key: string; info: SessionInfo; recorded: boolean }[] => {
    const root = join(options.stateDir, CONVERSATIONS_DIR);
    if (!existsSync(root)) return [];
    const found: { key: string; info: SessionInfo; recorded: boolean }[] = [];
    for (const name of readdirSync(root)) {
      try {
        const snapshot = readSnapshot(join(root, name, SNAPSHOT_FILE));
        if (!snapshot) continue;
        const route = snapshot.route ?? snapshot.session.lastRoute ?? { chatId: 0 };
        const key = shared ? SHARED_KEY : conversationKey(route);
        found.push({
          key,
          recorded: snapshot.child !== undefined,
          info: {
            route,
            ...(snapshot.name !== undefined ? { name: snapshot.name } : {}),
            live: false,
            state: 'idle',
            queued: 0,
            costUsd: snapshot.session.costUsd ?? 0,
            ...(snapshot.session.sessionId !== undefined ? { sessionId: snapshot.session.sessionId } : {}),
            ...(snapshot.lastActiveAt !== undefined ? { lastActiveAt: snapshot.lastActiveAt } : {}),
          },
        });
      } catch (err) {
        log.warn({ dir: name, err: describeError(err) }, 'could not read a conversation’s state');
      }
    }
    return found;
  };

  /** Liveness, idle processes, slots freed by time: what no file event announces. */
  const tick = (): void => {
    if (stopped) return;
    timer = clock.setTimeout(tick, TICK_MS);
    for (const conversation of conversations.values()) {
      try {
        conversation.pump();
      } catch (err) {
        background(async () => fail(conversation.key, conversation.route, err, conversation));
      }
    }
    background(async () => {
      // Failed conversations whose backoff is over and that no waiting frame will open: adopted again
      // (their recorded process, if any, is read and reported).
      const now = clock.now();
      for (const [key, { failure, route }] of [...failures]) {
        if (!mayRetry(failure, now) || conversations.has(key) || waiting.some((w) => keyOfFrame(w) === key))
          continue;
        if (await tryOpen(key, route)) failures.delete(key);
      }
      const views = [...conversations.values()].map((c) => ({
        key: c.key,
        live: c.live,
        evictable: c.evictable,
        lastActiveAt: c.lastActiveAt,
      }));
      for (const key of idleExpired(views, idleStopMs, clock.now())) {
        const conversation = conversations.get(key);
        if (conversation) retire(conversation, 'idle');
      }
      await drain();
    });
  };

  return {
    async start() {
      const taken = lockStateDir(options.stateDir, 'bridge');
      if (!taken.ok) throw new Error(taken.message);
      lock = taken.lock;
      stopped = false;
      mkdirSync(join(options.stateDir, CONVERSATIONS_DIR), { recursive: true, mode: 0o700 });
      prepareExchange(exchange);
      store = new FileChannelStore(join(options.stateDir, 'outbox.log'));
      if (existsSync(waitingPath)) waiting = JSON.parse(readFileSync(waitingPath, 'utf8')) as StartingFrame[];
      endpoint = createProtocolClient({
        socketPath: options.socketPath,
        agent: options.agent,
        store,
        onFrame,
        logger: log.child({ component: 'channel' }),
        clock,
        onConnectionChange: (state) => log.info({ connected: state.connected }, 'gateway connection'),
        onRefused: (r) =>
          log.warn(
            { event: 'frame_skipped', direction: r.direction, seq: r.seq, type: r.frameType, code: r.code },
            'the channel skipped a frame its receiver refused',
          ),
      });
      // Every conversation with a recorded process: adopted (or its exit reported) before new input.
      // One that cannot be opened is that conversation's failure (tried again by the tick), not the bridge's.
      for (const { key, info, recorded } of storedConversations()) {
        if (!recorded) continue;
        await exclusive(async () => {
          if (await tryOpen(key, info.route)) failures.delete(key);
        });
      }
      timer = clock.setTimeout(tick, TICK_MS);
      await endpoint.start();
    },

    async stop(kind) {
      stopped = true;
      clock.clearTimeout(timer);
      await chain.catch(() => {});
      await Promise.all([...conversations.values()].map((c) => c.stop(kind)));
      await Promise.all([...stopping.values()]);
      await endpoint?.stop();
      store?.close();
      lock?.release();
      lock = undefined;
    },

    status() {
      const sessions = [...conversations.values()].map((c) => {
        const status = c.status();
        return {
          ...c.info(),
          key: c.key,
          state: status.state,
          ...(status.detail !== undefined ? { detail: status.detail } : {}),
        };
      });
      const live = sessions.filter((s) => s.live);
      const only = live.length === 1 ? live[0] : sessions.length === 1 ? sessions[0] : undefined;
      return {
        state: busiest(sessions.map((s) => s.state)),
        connected: endpoint?.connected ?? false,
        sessions,
        ...(only?.pid !== undefined ? { pid: only.pid } : {}),
        ...(only?.sessionId !== undefined ? { sessionId: only.sessionId } : {}),
        ...(only?.detail !== undefined ? { detail: only.detail } : {}),
      };
    },
  };
}

/** The state that says most about the agent: any conversation running beats idle, and so on. */
function busiest(states: AgentState[]): AgentState {
  const order: AgentState[] = [
    'unknown',
    'awaiting_input',
    'running',
    'compacting',
    'starting',
    'exited',
    'idle',
  ];
  for (const state of order) if (states.includes(state)) return state;
  return 'idle';
}

/** Drops the keys whose value is `undefined` (config overrides that are not set). */
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
