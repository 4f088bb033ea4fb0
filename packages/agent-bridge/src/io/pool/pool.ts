/**
 * The pool's shell: one bridge's conversations, at most `maxLiveSessions` with a process. It performs
 * what `core/pool/pool.ts` (slots, the waiting queue) and `core/process/policy.ts` (a failure's backoff) decide:
 *
 * - **Slots.** A conversation that needs a process when all are taken stops the least recently used idle
 *   one (resumed later with `--resume`), or waits: its frames are kept in `waiting.json` (durable before
 *   they are acknowledged), the chat is told (`session_waiting`), and they are served in arrival order.
 * - **Idle stop.** A process idle for `idleStopMs` is stopped; the next message resumes it.
 * - **Time.** One timer, armed after every operation for the cores' next wake-up (a liveness poll, an
 *   idle expiry, a failure's retry); none while nothing is due.
 * - **Failures.** A conversation whose opening, serving or reading throws is let go of (its process
 *   left for the next adoption), blocked for its backoff with its frames kept, told once in its own chat
 *   (`conversation_failed`), and tried again by the tick (`failureStep`, performed by `io/pool/failures.ts`).
 *   The other conversations and the bridge go on.
 * Operations run one at a time (`exclusive`), each reading and changing the same collections (the open
 * conversations, those stopping, the waiting queue, the failures); the rules are in the cores.
 *
 * This file is longer than 400 lines because those operations are one closure over those collections:
 * opening, serving, evicting, stopping and the tick each read what the others change, and their order
 * under `exclusive` is what keeps a slot from being given twice.
 */
import { join } from 'node:path';
import {
  type Clock,
  describeError,
  type Endpoint,
  type Logger,
  type Receipt,
  type Route,
  type TimerHandle,
} from '@switchyard/protocol';
import {
  arrival,
  idleExpired,
  nextToServe,
  nextWake,
  planSlot,
  type SlotView,
  type StartingFrame,
  withoutMessagesOf,
} from '../../core/pool/pool.js';
import { DEFAULT_MAX_LINE_BYTES } from '../../core/translate/translator.js';
import { type BridgeOptions, CONVERSATIONS_DIR, conversationDir, settingsOf } from '../../options.js';
import type { FileChannelStore } from '../outbox/outbox.js';
import { Conversation } from '../session/conversation.js';
import { createFailureBook } from './failures.js';
import { loadFrames, saveFrames, WAITING_FILE } from './frame-files.js';

/** How often a live process's liveness is read (an exit says nothing on stdout). */
const LIVE_POLL_MS = 500;

/** What the pool is built from: the bridge's options and the channel it serves. */
export interface PoolConfig {
  options: BridgeOptions;
  log: Logger;
  clock: Clock;
  store: FileChannelStore;
  endpoint: Pick<Endpoint, 'send'>;
  /** The conversation a route belongs to (`shared`: one for the agent). */
  keyOf(route: Route): string;
}

/** The pool's handle; see the module comment. */
export interface Pool {
  /** The conversations with an object in memory. */
  readonly conversations: ReadonlyMap<string, Conversation>;
  /** Runs `work` after every pool operation before it, alone; a failure is logged and rejects. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** A frame that may need a process (`StartingFrame`); `receipt` when the channel handles it now. */
  arrive(frame: StartingFrame, receipt?: Receipt): Promise<void>;
  /** The conversation's object, opened if needed; `undefined` when that failed (the failure is its own). */
  tryOpen(key: string, route: Route | undefined): Promise<Conversation | undefined>;
  /** Makes a throw while serving `conversation` its own failure. */
  fail(key: string, route: Route | undefined, err: unknown, broken?: Conversation): void;
  /** Why `key` is failing, while it is. */
  failureReason(key: string): string | undefined;
  /** `/stop`: the conversation's process stopped now (resumed by its next message); what to tell the chat. */
  stopSession(key: string): { ok: boolean; message: string };
  /** Restores the waiting queue, adopts the recorded processes, starts the tick. */
  start(recorded: readonly { key: string; route: Route }[]): Promise<void>;
  /** Stops the tick and every conversation: `restart` leaves their processes running, `shutdown` ends them. */
  stop(kind: 'restart' | 'shutdown'): Promise<void>;
}

/** Builds the pool of a started bridge. */
export function createPool(config: PoolConfig): Pool {
  const { options, log, clock, store, endpoint, keyOf } = config;
  const env = options.env ?? process.env;
  const shared = options.conversations === 'shared';
  const maxLive = Math.max(1, options.maxLiveSessions ?? 4);
  const idleStopMs = options.idleStopMs ?? 30 * 60_000;
  const keyOfFrame = (frame: StartingFrame): string => keyOf(frame.route);
  const exchange = options.exchange ?? { dir: join(options.stateDir, 'files') };
  const dirOf = (key: string): string => join(options.stateDir, CONVERSATIONS_DIR, conversationDir(key));
  const waitingFile = join(options.stateDir, WAITING_FILE);
  const conversations = new Map<string, Conversation>();
  /**
   * Processes being stopped to free a slot (or for idleness), by conversation: their slots are not free
   * yet, and their conversations are not opened again until they are gone (see `open`).
   */
  const stopping = new Map<string, Promise<void>>();
  let waiting: StartingFrame[] = [];
  let timer: TimerHandle | undefined;
  /** When {@link timer} is due. */
  let wakeAt: number | undefined;
  let stopped = false;
  let chain: Promise<unknown> = Promise.resolve();
  /** Conversations whose opening or serving threw, until one works again (see `io/pool/failures.ts`). */
  const failures = createFailureBook({
    clock,
    endpoint,
    retry: (key, route) =>
      background(async () => {
        if (await tryOpen(key, route)) failures.opened(key);
      }),
  });
  /** Runs pool operations one at a time, in call order; a failure is logged and does not break the chain. */
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work).finally(schedule);
    chain = next.catch((err: unknown) => log.error({ err: describeError(err) }, 'bridge operation failed'));
    return next;
  };

  /** Arms the one timer for the core's next wake-up (`nextWake`), or none when nothing is due. */
  const schedule = (): void => {
    if (stopped) return;
    const now = clock.now();
    const retries = failures.wakeAt === undefined ? [] : [failures.wakeAt];
    const at = nextWake({ views: views(), idleMs: idleStopMs, retries, livePollMs: LIVE_POLL_MS }, now);
    if (at === wakeAt && (at === undefined || timer !== undefined)) return;
    clock.clearTimeout(timer);
    timer = undefined;
    wakeAt = at;
    if (at !== undefined) timer = clock.setTimeout(tick, at - now);
  };
  /** {@link exclusive} for work nobody awaits: its failure is logged by the chain, and goes no further. */
  const background = (work: () => Promise<unknown>): void => {
    exclusive(work).catch(() => {});
  };

  /**
   * `key` failed (its opening, a frame, or a read of its output threw): the object is dropped (its
   * process left running, for the next open to adopt), the conversation backs off, and its chat is told
   * the first time. Nothing of it reaches the other conversations or the bridge process.
   */
  const fail = (key: string, route: Route | undefined, err: unknown, broken?: Conversation): void => {
    const reason = describeError(err);
    const { failures: count, retryAt } = failures.failed(key, route, reason);
    const retryInMs = retryAt - clock.now();
    const message = 'a conversation failed; the others go on, and it is tried again later';
    log.error({ conversation: key, err: reason, failures: count, retryInMs }, message);
    const current = broken ?? conversations.get(key);
    if (current && conversations.get(key) === current) retire(current, 'it failed', 'restart');
    schedule();
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

  const saveWaiting = (): void => saveFrames(waitingFile, waiting);

  /** The conversation's object, created (its state restored, a recorded process adopted) if needed. */
  const open = async (key: string, route: Route | undefined): Promise<Conversation> => {
    const existing = conversations.get(key);
    if (existing) return existing;
    // A new object adopts the process its snapshot records: never the one still being stopped, which
    // would take the frame and then die with it.
    await stopping.get(key);
    const reopened = conversations.get(key);
    if (reopened) return reopened;
    const conversation = new Conversation({
      key,
      route: shared ? undefined : route,
      dir: dirOf(key),
      settings: settingsOf(options, shared ? undefined : route),
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

  /** The conversations as the slot rules see them. */
  const views = (): SlotView[] =>
    [...conversations.values()].map((c) => ({
      key: c.key,
      live: c.live,
      evictable: c.evictable,
      lastActiveAt: c.lastActiveAt,
    }));

  /** Whether `key` may start a process now; evicts the least recently used idle one when that helps. */
  const slotFor = (key: string): 'free' | 'wait' | 'busy' => {
    const plan = planSlot(views(), maxLive, key, stopping.size);
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
    receipt?: Receipt,
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
      await conversation.handle(frame, receipt);
    } catch (err) {
      fail(key, frame.route, err, conversation);
      return failed();
    }
    failures.opened(key);
    return 'served';
  };

  /** Serves waiting frames in arrival order while slots allow. */
  const drain = async (): Promise<void> => {
    for (
      let index = nextToServe(waiting, keyOfFrame, failures.blocked());
      index !== undefined && !stopped;
    ) {
      const next = waiting[index] as StartingFrame;
      const outcome = await serve(next, true);
      if (outcome === 'waiting') return;
      if (outcome === 'served') {
        waiting = waiting.filter((w) => w !== next);
        saveWaiting();
      }
      index = nextToServe(waiting, keyOfFrame, failures.blocked());
    }
  };

  /** A frame that may need a process: served, or queued behind its conversation or for a slot. */
  const arrive = async (frame: StartingFrame, receipt?: Receipt): Promise<void> => {
    if (arrival(waiting, frame, keyOfFrame, failures.blocked()) === 'queue') {
      waiting = [...waiting, frame];
      saveWaiting();
    } else {
      await serve(frame, false, receipt);
    }
  };

  /** `/stop` of a conversation: its waiting messages are dropped, its process stopped when idle. */
  const stopSession = (key: string): { ok: boolean; message: string } => {
    const conversation = conversations.get(key);
    const before = waiting.length;
    waiting = withoutMessagesOf(waiting, key, keyOfFrame);
    if (waiting.length !== before) saveWaiting();
    if (!conversation?.live) {
      if (conversation) retire(conversation, 'asked to stop');
      return { ok: true, message: 'No Claude process was running for this conversation.' };
    }
    if (!conversation.evictable) {
      return {
        ok: false,
        message: 'This conversation is busy (a turn, a prompt or a command). Send /stop first.',
      };
    }
    retire(conversation, 'asked to stop');
    return { ok: true, message: 'Stopped this conversation’s Claude process; your next message resumes it.' };
  };

  /** Liveness, idle processes, failed conversations' retries, slots freed by time: what no event announces. */
  const tick = (): void => {
    timer = undefined;
    wakeAt = undefined;
    if (stopped) return;
    for (const conversation of conversations.values()) {
      try {
        conversation.pump();
      } catch (err) {
        background(async () => fail(conversation.key, conversation.route, err, conversation));
      }
    }
    // Failed conversations past their backoff that nothing else will open: opened (adopted) again.
    const busy = new Set([...conversations.keys(), ...waiting.map(keyOfFrame)]);
    failures.tick(busy);
    background(async () => {
      for (const key of idleExpired(views(), idleStopMs, clock.now())) {
        const conversation = conversations.get(key);
        if (conversation) retire(conversation, 'idle');
      }
      await drain();
    });
  };

  return {
    conversations,
    exclusive,
    arrive,
    tryOpen,
    fail,
    failureReason: (key) => failures.reason(key),
    stopSession,
    async start(recorded) {
      stopped = false;
      waiting = loadFrames<StartingFrame>(waitingFile);
      // Every conversation with a recorded process: adopted (or its exit reported) before new input.
      // One that cannot be opened is that conversation's failure (tried again by the tick), not the bridge's.
      for (const { key, route } of recorded) {
        await exclusive(async () => {
          if (await tryOpen(key, route)) failures.opened(key);
        });
      }
      schedule();
    },
    async stop(kind) {
      stopped = true;
      clock.clearTimeout(timer);
      await chain.catch(() => {});
      await Promise.all([...conversations.values()].map((c) => c.stop(kind)));
      await Promise.all([...stopping.values()]);
    },
  };
}
