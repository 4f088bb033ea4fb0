/**
 * The one way a turn nobody typed enters the gateway: a schedule's due time or a webhook's delivery
 * becomes an inbound entry of the inbox, exactly as a user's Telegram message does
 * (`io/intake/telegram-handlers.ts`), so it has the same durability and exactly-once delivery.
 *
 * Order, and why:
 * 1. Durable first: the run's `automation_runs` row (its key the primary key) and its inbound row
 *    (`queued`) in ONE transaction, before {@link Injector.inject} returns. A key seen before writes
 *    nothing and is `duplicate`; a crash after the commit leaves a queued row that the boot re-sends to
 *    the bridge like any other, so a run is neither lost nor doubled.
 * 2. The note ("⏰ ci-digest · due …") is sent to the chat as a message of its own, and becomes the
 *    message the run's answer replies to (its id is written into the run's inbound row, as a user's
 *    message id is for theirs). A note of its own, not the placeholder's first line, because the
 *    placeholder becomes the answer and a private chat's answer is a draft with no placeholder at all:
 *    only a message of its own stays in the chat, in both kinds of reply, saying why the agent spoke.
 * 3. Then today's budget weighs the run, the turn machine takes the row with the verdict
 *    (`turns.arrive`: a refused run is marked unread there), an admitted frame goes to the bridge, and
 *    the row is acknowledged.
 *    A note that cannot be sent does not hold the run up: the answer then replies to nothing.
 *
 * The frame carries `origin`, so the bridge's header tells Claude that no person wrote it. Until its
 * note is sent, a run's row names a negative stand-in message id derived from its key: never a real
 * Telegram id (those are positive), so no reply or send reconciliation can mistake it for one, and
 * non-zero, as a draft's id must be.
 *
 * Crash window left: a note whose send Telegram carried out but whose id was not yet written is sent
 * again at the next start (one doubled note, never a doubled run).
 */
import {
  type Attachment,
  automationLane,
  type Clock,
  type FrameOf,
  frameProblem,
  type Logger,
  type Route,
} from '@switchyard/protocol';
import type { BudgetVerdict } from '../../core/turns/turn-steps.js';
import type { AutomationRunRow, GatewayStore } from '../../store/store.js';
import type { Turns } from '../turns/turns.js';

/** A turn nobody typed: a schedule's due time or a webhook's delivery. */
export interface AutomationRun {
  /** Unique for ever: `schedule:<scheduleId>:<dueIso>` or `webhook:<hook>:<deliveryId>`. */
  key: string;
  /** The chat (and topic) it speaks in; the run itself goes to its lane there ({@link runRoute}). */
  route: Route;
  /** Its conversation's lane in that chat; default `automationLane(origin.kind, origin.name)`. */
  lane?: string;
  origin: { kind: 'schedule' | 'webhook'; name: string };
  /** The short note the chat shows so people see why the agent talks ("⏰ ci-digest · due …"). */
  note: string;
  /** What reaches Claude as the message's text. */
  text: string;
  /**
   * A webhook delivery's SHA-256 of what was signed: a run with the same hash from the same hook is a
   * duplicate whatever its key (a captured delivery replayed under a new delivery id).
   */
  contentSha256?: string;
  attachments?: Attachment[];
  /**
   * The allowed user its cost counts against (a chat schedule's creator): the frame's sender id, which
   * the spend ledger charges. Absent: nobody's (sender 0), the agent's alone.
   */
  chargeTo?: number;
}

/** Puts runs in the inbox; see the module comment. */
export interface Injector {
  /**
   * Durable (SQLite, committed) before it returns; a key seen before is 'duplicate' and changes nothing.
   * Called inside a transaction of the caller's, the run commits (or rolls back) with it.
   */
  inject(run: AutomationRun): 'accepted' | 'duplicate';
}

/** The longest run key: the inbound id (`run:<key>`) must stay within the protocol's 200 characters. */
export const RUN_KEY_LIMIT = 190;

/** What the injector needs. */
export interface InjectorOptions {
  store: Pick<GatewayStore, 'atomically' | 'addInbound' | 'getInbound'> &
    Pick<GatewayStore, 'recordRun' | 'getRun' | 'noteSent' | 'noteFailed' | 'dueNotes'>;
  turns: Pick<Turns, 'arrive'>;
  /** Today's budget's verdict on a run, asked before the turn machine takes it (as a Telegram message's). */
  budget(frame: FrameOf<'user_message'>): BudgetVerdict;
  /** Hands an admitted user message to the bridge's channel (the same path as a Telegram message's). */
  forward(frame: FrameOf<'user_message'>): void;
  /** Sends the note as a plain message; resolves to its message id, or `undefined` when it failed. */
  sendNote(route: Route, text: string): Promise<number | undefined>;
  /** The run's chat may be addressed by the bridge (as `noteChat` for a user's message). */
  noteChat(chatId: number): void;
  clock: Pick<Clock, 'now'>;
  logger: Logger;
}

/** The injector's handle: {@link Injector} plus a lifecycle. */
export interface InjectorHandle extends Injector {
  /** Sends the notes a crash left unsent (their runs are re-sent by the boot's inbox re-send). */
  start(): void;
  /**
   * Waits for the deliveries in flight (call it before the bridge's endpoint stops); a run injected
   * after this stays queued for the next boot's re-send.
   */
  stop(): Promise<void>;
}

/** The inbound id of a run. */
export function runInboundId(key: string): string {
  return `run:${key}`;
}

/**
 * The negative, non-zero stand-in message id of a run whose note is not (yet) sent; see the module comment.
 */
export function standInMessageId(key: string): number {
  let hash = 0;
  for (let i = 0; i < key.length; i++) hash = (Math.imul(hash, 31) + key.charCodeAt(i)) | 0;
  return -((hash >>> 1) + 1);
}

/**
 * Where a run goes: its chat and topic, in a lane of its own — one conversation (one Claude session,
 * resumable, in the operator's mode for automation) per hook and per schedule, never the people's
 * conversation there with its mode and "always allow" rules (issue 27).
 */
export function runRoute(run: Pick<AutomationRun, 'route' | 'lane' | 'origin'>): Route {
  const { chatId, threadId } = run.route;
  return {
    chatId,
    ...(threadId !== undefined ? { threadId } : {}),
    lane: run.lane ?? automationLane(run.origin.kind, run.origin.name),
  };
}

/** The `user_message` frame of a run. */
export function runFrame(run: AutomationRun, sentAt: number): FrameOf<'user_message'> {
  return {
    type: 'user_message',
    inboundId: runInboundId(run.key),
    route: runRoute(run),
    telegramMessageId: standInMessageId(run.key),
    sender: { id: run.chargeTo ?? 0, name: `${run.origin.kind} ${run.origin.name}`.slice(0, 300) },
    text: run.text,
    attachments: run.attachments ?? [],
    sentAt,
    origin: run.origin,
  };
}

/** Creates the injector; see the module comment. */
export function createInjector(options: InjectorOptions): InjectorHandle {
  const { store, logger } = options;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;

  /** The note, then the turn machine and the bridge (steps 2 and 3 of the module comment). */
  const deliver = async (run: Pick<AutomationRunRow, 'key' | 'inboundId' | 'route' | 'note'>) => {
    // Rolled back with the caller's transaction: there is no run to announce.
    if (!store.getRun(run.key)) return;
    const messageId = await options.sendNote(run.route, run.note).catch(() => undefined);
    if (messageId === undefined) store.noteFailed(run.key);
    else store.noteSent(run.key, messageId);
    const row = store.getInbound(run.inboundId);
    if (!row) return;
    // Today's budget first, so the turn machine takes the run with the verdict (and marks a refused one).
    const budget = row.state === 'queued' ? options.budget(row.frame) : { admit: true as const };
    const arrival = options.turns.arrive(row, budget);
    if (row.state === 'queued' && budget.admit === true) options.forward(row.frame);
    arrival.acknowledge();
  };
  const track = (work: Promise<void>): void => {
    const tracked = work
      .catch((error: unknown) =>
        logger.error({ event: 'run_delivery_failed', error: String(error) }, 'a run was not passed on'),
      )
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  return {
    inject(run) {
      if (run.key.length === 0 || run.key.length > RUN_KEY_LIMIT)
        throw new Error(`a run's key must have 1 to ${RUN_KEY_LIMIT} characters: ${run.key.slice(0, 60)}…`);
      const frame = runFrame(run, options.clock.now());
      const problem = frameProblem(frame);
      if (problem !== undefined) throw new Error(`run ${run.key} cannot be delivered: ${problem}`);
      const accepted = store.atomically(() => {
        const inboundId = frame.inboundId;
        if (
          !store.recordRun({
            key: run.key,
            inboundId,
            route: run.route,
            origin: run.origin,
            note: run.note,
            contentSha256: run.contentSha256,
          })
        )
          return false;
        store.addInbound({ inboundId, frame });
        return true;
      });
      if (!accepted) return 'duplicate';
      logger.info({ event: 'run_injected', origin: run.origin.kind, name: run.origin.name, key: run.key });
      options.noteChat(run.route.chatId);
      // After the caller's own transaction, if it made this call inside one (the schedules do): the note's
      // send journal row and the frame's outbox row are not the caller's to roll back.
      const started = { key: run.key, inboundId: frame.inboundId, route: run.route, note: run.note };
      if (!stopped) track(Promise.resolve().then(() => deliver(started)));
      return 'accepted';
    },
    start() {
      for (const run of store.dueNotes()) {
        track(
          options
            .sendNote(run.route, run.note)
            .catch(() => undefined)
            .then((messageId) => {
              if (messageId === undefined) store.noteFailed(run.key);
              else store.noteSent(run.key, messageId);
            }),
        );
      }
    },
    async stop() {
      stopped = true;
      await Promise.all([...inFlight]);
    },
  };
}
