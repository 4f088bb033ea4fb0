/**
 * The bridge: one socket to the gateway, one durable outbox, and a Claude session per conversation (a
 * chat, or a forum topic; or one for the whole agent with `conversations: shared`). Each conversation is
 * a {@link Conversation} with its own process, state directory and restart contract; this file is the
 * wiring around them:
 *
 * - **Routing.** Every gateway frame that belongs to a conversation names it (its `route`); answers to
 *   prompts are routed by their request id to the conversation that opened the prompt.
 * - **The pool.** At most `maxLiveSessions` processes run; idle ones stop; a conversation that fails is
 *   its own failure, never the bridge's (`pool.ts`, the shell of `core/pool/pool.ts` and the process policy).
 * - **Adoption.** On start every conversation with a recorded process is restored and its process
 *   adopted (or its exit reported).
 *
 * Every frame is handled inside the pool's `exclusive`, one at a time with the pool's own operations.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  type AgentState,
  type AppFrame,
  conversationKey,
  createProtocolClient,
  createTransferPeer,
  describeError,
  type Endpoint,
  type FrameOf,
  type GatewayToBridge,
  lockStateDir,
  prepareExchange,
  type Receipt,
  type Route,
  type SessionInfo,
  type StateLock,
  silentLogger,
  systemClock,
  TRANSFER_MAX_BYTES,
  type TransferPeer,
} from '@switchyard/protocol';
import type { StartingFrame } from './core/pool/pool.js';
import { type FrameHandlers, type GatewayFrameType, handleFrame } from './core/session/frame-handlers.js';
import { createExchangeSweep, type ExchangeSweep } from './io/files/exchange-sweep.js';
import { createScheduleAsker } from './io/mcp/schedule-tools.js';
import { FileChannelStore } from './io/outbox/outbox.js';
import { createPool, type Pool } from './io/pool/pool.js';
import { readSnapshot, SNAPSHOT_FILE } from './io/session/snapshot.js';
import { createTerminalCommands, type TerminalCommands } from './io/terminal/commands.js';
import { type Bridge, type BridgeOptions, CONVERSATIONS_DIR, SHARED_KEY } from './options.js';

/** Builds a bridge; nothing starts until `start()`. */
export function createBridge(options: BridgeOptions): Bridge {
  const log = (options.logger ?? silentLogger).child({ component: 'bridge', agent: options.agent });
  const clock = options.clock ?? systemClock;
  const shared = options.conversations === 'shared';
  // A lane (a webhook's or schedule's conversation) is its own session even when the chats share one.
  const keyOf = (route: Route): string =>
    shared && route.lane === undefined ? SHARED_KEY : conversationKey(route);
  const exchange = options.exchange ?? { dir: join(options.stateDir, 'files') };
  let store: FileChannelStore | undefined;
  /** Held from the first thing `start()` does to the last thing `stop()` does. */
  let lock: StateLock | undefined;
  let endpoint: Endpoint | undefined;
  let pool: Pool | undefined;
  /** The schedule tools' pending calls, answered by the gateway's `schedule_result`. */
  const schedules = createScheduleAsker({
    send: (frame) => endpoint?.send(frame) ?? Promise.reject(new Error('the bridge is not connected')),
    clock,
  });
  let terminal: TerminalCommands | undefined;
  /** Files to and from a gateway that shares no disk with this side (`filesOverProtocol`). */
  let transfers: TransferPeer | undefined;
  /** The worker's own retention of its exchange, when it shares none with the gateway. */
  let sweep: ExchangeSweep | undefined;

  /**
   * Where each gateway frame goes, one entry per type: the pool (a frame that may need a process), the
   * owner of a prompt, a conversation opened for it, the terminal commands, or the bridge itself. What a
   * conversation then does with its frames is its own table (`io/session/commands.ts`).
   */
  const routesOf = (pool: Pool, terminal: TerminalCommands): FrameHandlers<GatewayFrameType> => {
    const toPool = (frame: StartingFrame, receipt?: Receipt): Promise<void> => pool.arrive(frame, receipt);
    const toPromptOwner = async (
      frame: FrameOf<'permission_answer' | 'question_answer'>,
      receipt?: Receipt,
    ): Promise<void> => {
      const owner = [...pool.conversations.values()].find((c) => c.hasPrompt(frame.requestId));
      if (owner) {
        try {
          await owner.handle(frame, receipt);
          return;
        } catch (err) {
          // The prompt is re-offered when the conversation is adopted again (`initialize`).
          pool.fail(owner.key, owner.route, err, owner);
        }
      }
      // Gone (answered, cancelled, or its process stopped): the gateway shows it expired.
      endpoint
        ?.send({ type: 'prompt_closed', requestId: frame.requestId, reason: 'cancelled' })
        .catch(() => {});
    };
    const toConversation = async (
      frame: FrameOf<'interrupt' | 'status_request' | 'rename'>,
      receipt?: Receipt,
    ): Promise<void> => {
      const key = keyOf(frame.route);
      const conversation = await pool.tryOpen(key, frame.route);
      try {
        if (!conversation) throw new Error(pool.failureReason(key) ?? 'it failed');
        if (frame.type === 'status_request' && !conversation.live) {
          conversation.emit([terminal.withWorktreeStatus(conversation.statusFrame(frame.commandId))]);
          return;
        }
        await conversation.handle(frame, receipt);
      } catch (err) {
        if (conversation) pool.fail(key, frame.route, err, conversation);
        const message = `This conversation could not be opened (${describeError(err).slice(0, 1000)}); try again shortly.`;
        endpoint
          ?.send({ type: 'command_result', commandId: frame.commandId, ok: false, message })
          .catch(() => {});
      }
    };
    return {
      user_message: toPool,
      set_model: toPool,
      set_mode: toPool,
      compact: toPool,
      clear: toPool,
      permission_answer: toPromptOwner,
      question_answer: toPromptOwner,
      interrupt: toConversation,
      status_request: toConversation,
      rename: toConversation,
      ...terminal.handlers,
      async file_sent(frame) {
        // Only the conversation whose outbox holds the file knows its id; the others ignore it.
        for (const conversation of pool.conversations.values()) conversation.settleFile(frame);
      },
      async stop_session(frame) {
        const result = pool.stopSession(keyOf(frame.route));
        void endpoint
          ?.send({ type: 'command_result', commandId: frame.commandId, ...result })
          .catch(() => {});
      },
      async schedule_result(frame) {
        schedules.answer(frame);
      },
      transfer_offer: (frame) => transfersNow().frame(frame),
      transfer_chunk: (frame) => transfersNow().frame(frame),
      transfer_ack: (frame) => transfersNow().frame(frame),
      transfer_done: (frame) => transfersNow().frame(frame),
      async sessions_request(frame) {
        endpoint
          ?.send({ type: 'sessions', commandId: frame.commandId, sessions: listSessions() })
          .catch(() => {});
      },
    };
  };
  let routes: FrameHandlers<GatewayFrameType> | undefined;
  /** The transfers' receiver, only when files cross the protocol: a gateway sharing the exchange sends none. */
  const transfersNow = (): Pick<TransferPeer, 'frame'> => {
    if (!transfers) throw new Error('the bridge is not started');
    if (options.filesOverProtocol) return transfers;
    return {
      frame: async (frame) =>
        log.warn({ type: frame.type }, 'ignored a file transfer: this bridge shares the exchange'),
    };
  };

  /** A frame from the gateway; acknowledged once this resolves (routed by {@link routesOf}). */
  const onFrame = (frame: AppFrame, receipt?: Receipt): Promise<void> => {
    const started = pool;
    const table = routes;
    if (!started || !table) return Promise.reject(new Error('the bridge is not started'));
    return started.exclusive(async () => {
      if (!Object.hasOwn(table, frame.type)) {
        // Bridge-to-gateway frames arriving here are a peer bug; the channel already validated them.
        log.warn({ type: frame.type }, 'ignored a frame meant for the gateway');
        return;
      }
      await handleFrame(table, frame as GatewayToBridge, receipt);
    });
  };

  /** Every conversation this agent has: the live ones from memory, the others from their snapshots. */
  const listSessions = (): SessionInfo[] => {
    const conversations = pool?.conversations ?? new Map();
    const list: SessionInfo[] = [...conversations.values()].map((c) => c.info());
    const seen = new Set(conversations.keys());
    for (const { key, info } of storedConversations()) {
      if (!seen.has(key)) list.push(info);
    }
    return list.slice(0, 1000).map((info) => terminal?.withWorktree(info) ?? info);
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
        const key = keyOf(route);
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

  return {
    async start() {
      const taken = lockStateDir(options.stateDir, 'bridge', clock);
      if (!taken.ok) throw new Error(taken.message);
      lock = taken.lock;
      mkdirSync(join(options.stateDir, CONVERSATIONS_DIR), { recursive: true, mode: 0o700 });
      prepareExchange(exchange);
      store = new FileChannelStore(join(options.stateDir, 'outbox.log'), {
        onLateSyncFailure: (err) =>
          log.error(
            { err: describeError(err) },
            'the disk refused to flush the outbox after a message went to Claude: it is kept, but a machine crash now could lose it',
          ),
      });
      endpoint = createProtocolClient({
        socketPath: options.socketPath,
        agent: options.agent,
        ...(options.release !== undefined ? { release: options.release } : {}),
        store,
        onFrame,
        logger: log.child({ component: 'channel' }),
        clock,
        onConnectionChange: (state) => {
          transfers?.connection(state.connected);
          log.info({ connected: state.connected }, 'gateway connection');
        },
        onRefused: (r) =>
          log.warn(
            { event: 'frame_skipped', direction: r.direction, seq: r.seq, type: r.frameType, code: r.code },
            'the channel skipped a frame its receiver refused',
          ),
      });
      const link = endpoint;
      transfers = createTransferPeer({
        exchange,
        maxBytes: TRANSFER_MAX_BYTES,
        send: (frame) => link.send(frame),
        connected: () => link.connected,
        clock,
        logger: log.child({ component: 'transfers' }),
      });
      const carried = options.filesOverProtocol ? { transfers } : {};
      pool = createPool({
        options: { ...options, files: { ...options.files, schedules, ...carried } },
        log,
        clock,
        store,
        endpoint,
        keyOf,
      });
      terminal = createTerminalCommands({ options, pool, endpoint, keyOf, shared, log, clock });
      routes = routesOf(pool, terminal);
      const recorded = storedConversations().filter((c) => c.recorded);
      await pool.start(recorded.map(({ key, info }) => ({ key, route: info.route })));
      await endpoint.start();
      if (options.filesOverProtocol) {
        sweep = createExchangeSweep({ dir: exchange.dir, days: options.retentionDays ?? 7, clock, log });
        await sweep.start();
      }
    },

    async stop(kind) {
      terminal?.stop();
      transfers?.stop();
      await sweep?.stop();
      await pool?.stop(kind);
      await endpoint?.stop();
      store?.close();
      lock?.release();
      lock = undefined;
    },

    status() {
      const sessions = [...(pool?.conversations.values() ?? [])].map((c) => {
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
    'limited',
    'running',
    'compacting',
    'starting',
    'exited',
    'idle',
  ];
  for (const state of order) if (states.includes(state)) return state;
  return 'idle';
}
