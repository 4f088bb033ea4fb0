/**
 * Delivery: how a gateway command's line gets into the CLI's stdin exactly once, across a bridge killed
 * at any point of the write, and how commands are held behind a `/clear` or `/compact`.
 *
 * Exactly once into the CLI: a gateway command is acknowledged only after the bridge's `onFrame` returns,
 * and its key is recorded (with the intent) before the write. Every `user` line (messages and `/clear`,
 * `/compact`) carries a fresh `uuid`, kept in the intent. What 2.1.328 does with it (measured, see the
 * README):
 * - it prints `command_lifecycle` `queued` with `command_uuid` = that uuid on stdout within milliseconds
 *   of *reading* the line — mid-turn too, long before a turn takes a steer — and only for lines that
 *   carry a uuid;
 * - it handles stdin lines in order: that `queued` comes before the answer to a control request written
 *   after the line;
 * - it drops, silently, a line whose uuid it has already taken (queued, taken mid-turn, or finished).
 * A restart that finds an intent settles it from stdout alone ({@link Delivery.settle}): the snapshot
 * holding the intent was written before the write, so its stdout offset is before any `queued` for it,
 * and the adoption's replay of stdout from there sees that line if the CLI read it. If not, the bridge
 * writes a fence — the `initialize` it sends after every adoption anyway — and reads on until the fence
 * is answered: a line in the fifo is read before the fence, so a fence answered with no `queued` before
 * it means the line never reached the fifo, and it is written now. If the fence is not answered in time
 * (the CLI busy), the line is written anyway: with the same uuid, the CLI drops it if it had it.
 * Why not the transcript, as before: for a content-array message (what the bridge writes) the
 * `queue-operation enqueue` line has no content, and a steer's text appears only when the running turn
 * takes it — a crash in between made the restarted bridge write the steer again. Why not
 * `--replay-user-messages`: its echo comes when a turn takes the message, not when the CLI reads it.
 * The fifo itself cannot be asked after the fact.
 * Control lines (answers, interrupts, model and mode) are assumed written: a duplicate answer does more
 * harm than a lost one, which the `initialize` re-offers.
 *
 * Held commands: a `/clear` or `/compact` that arrives while a turn runs, and every message after it, is
 * kept in the snapshot (`held`) and written once the CLI is idle; held items are durable like delivered
 * ones and go through the same intent path when released; if the process exits first they are reported,
 * never dropped silently. The rules, the release order and the settle's fence are `core/delivery/hold.ts`'s; this
 * shell performs them.
 */
import { randomUUID } from 'node:crypto';
import {
  type Clock,
  describeError,
  type FrameOf,
  type Logger,
  type PeerCursor,
  type Receipt,
  type Route,
} from '@switchyard/protocol';
import {
  droppedFrames,
  type HeldFrame,
  type HoldAction,
  type HoldEvent,
  holdStep,
  type Settling,
} from '../../core/delivery/hold.js';
import type { Session } from '../../core/session/session.js';
import type { Step } from '../../core/session/state.js';
import type { FrameSink } from '../outbox/frame-sink.js';
import type { Supervisor } from '../process/supervisor.js';
import type { Intent } from '../session/snapshot.js';
import { renderSlashCommand, renderUserMessage } from './user-input.js';

/** A stage of one stdin write; see `BridgeOptions.onDeliveryStage`. */
export type DeliveryStage = 'intent_saved' | 'written' | 'announced';

/** How many delivered keys the snapshot keeps (a gateway resends only recent, unacknowledged frames). */
export const DELIVERED_KEPT = 2000;

/** Options of {@link Delivery}. */
export interface DeliveryOptions {
  log: Logger;
  /** Time for the fence's deadline and its polling. */
  clock: Clock;
  /** Fault injection for tests; see `BridgeOptions.onDeliveryStage`. */
  onStage?: ((stage: DeliveryStage, key: string) => void) | undefined;
}

/**
 * Delivery's part of the conversation's snapshot. The conversation owns the snapshot and is its only
 * writer: delivery reads these and asks for each change (durable at the next `persist`).
 */
export interface DeliveryRecordPort {
  /** Whether the command with this key was written (or held) already. */
  delivered(key: string): boolean;
  /** Records a key as delivered, once (the most recent {@link DELIVERED_KEPT} are kept). */
  remember(key: string): void;
  /** Takes back a key {@link remember}ed for a write whose durable record failed. */
  forget(key: string): void;
  /** The write in progress, if any (see `Intent`). */
  readonly intent: Intent | undefined;
  setIntent(intent: Intent | undefined): void;
  /** Stdout showed the intent's line read: kept with the offset that moves past it. */
  markIntentRead(): void;
  /** Items held behind a `/clear` or `/compact`, in order. */
  readonly held: readonly HeldFrame[];
  setHeld(held: readonly HeldFrame[]): void;
}

/** What delivery needs of the bridge around it. */
export interface DeliveryHost {
  /** Where delivered keys, the intent and held items are kept (see {@link DeliveryRecordPort}). */
  readonly record: DeliveryRecordPort;
  readonly session: Session;
  readonly supervisor: Pick<
    Supervisor,
    'child' | 'unknown' | 'writeLine' | 'writeAll' | 'noteActivity' | 'writable'
  >;
  emit: FrameSink['emit'];
  persist(force: boolean): void;
  /**
   * Runs `work` (which emits frames) and saves the snapshot, with `cursor` when given, as one durable
   * write; the frames reach the socket only once it is done. Throws, with nothing stored, if it fails.
   */
  commit(work: () => void, cursor?: PeerCursor, durable?: () => void): void;
  /** Reads and handles the stdout available now (the fence's answer arrives that way). */
  pump(): void;
}

/** The one path every stdin write takes, and the recovery of one a crash interrupted. */
export class Delivery {
  readonly #options: DeliveryOptions;
  readonly #host: DeliveryHost;
  /**
   * The hold rules' settling write (`core/delivery/hold.ts`): set from start until the intent a crash left is
   * settled. While set, held items stay held. The held list itself is the record's.
   */
  #settling: Settling | undefined;
  /** The fence's request id while one is out. */
  #fence: string | undefined;
  /** Why held items are being dropped, for the `dropped` action's report. */
  #dropReason = '';

  constructor(options: DeliveryOptions, host: DeliveryHost) {
    this.#options = options;
    this.#host = host;
  }

  /** Whether the command with this key was written (or held) already: a resent frame is ignored. */
  delivered(key: string): boolean {
    return this.#host.record.delivered(key);
  }

  /** Whether anything is held: then every later message and command queues behind it. */
  get holding(): boolean {
    return this.#host.record.held.length > 0;
  }

  /**
   * The one path every stdin write takes. One durable write first (the host's `commit`: one record of
   * the outbox log, one fsync) holds together what a crash must find together: the key remembered, the
   * intent, the session state that accepted the command, the frames it announces (sent once durable, so
   * always before anything the CLI prints in answer) and — for a gateway frame handled now — the channel
   * cursor that acknowledges it, so a resend is dropped by number. Then the line goes to the CLI, the
   * moment the record is written (its fsync follows the line: a killed bridge finds the record all the
   * same, see `outbox.ts`), and then the frames to the socket. `uuid` is
   * the line's own (user lines; see the module comment), so a restart can tell whether it was read.
   */
  deliver(key: string, line: string, step: Step, uuid?: string, receipt?: Receipt): void {
    const { record, supervisor } = this.#host;
    const onStage = this.#options.onStage;
    const known = record.delivered(key);
    record.remember(key);
    record.setIntent({ key, line, ...(uuid !== undefined ? { uuid } : {}) });
    // The line goes in as soon as the record is written, before its fsync and before the frames it
    // announces reach the socket: the CLI starts on it first, and the frames still leave (fsynced)
    // before anything it answers.
    let written = false;
    let unwritten: unknown;
    const write = (): void => {
      onStage?.('intent_saved', key);
      try {
        supervisor.writeLine(line);
        written = true;
      } catch (err) {
        unwritten = err;
      }
    };
    try {
      this.#host.commit(
        () => this.#host.emit(step.frames, undefined, { key, from: 0 }),
        receipt?.cursor,
        write,
      );
    } catch (err) {
      // Nothing was stored: the channel tries the frame again, and it must find it not delivered.
      record.setIntent(undefined);
      if (!known) record.forget(key);
      throw err;
    }
    // Stored, but nothing reads the fifo: the intent stays, for the exit check and the next settle.
    if (!written) throw unwritten;
    onStage?.('written', key);
    // Input just went in: silence from here on is what the stuck watchdog measures.
    supervisor.noteActivity();
    supervisor.writeAll(step.writes);
    onStage?.('announced', key);
    record.setIntent(undefined);
    this.#host.persist(false);
  }

  /** A user message written now, with a fresh uuid. */
  deliverMessage(message: FrameOf<'user_message'>, step: Step, receipt?: Receipt): void {
    const uuid = randomUUID();
    this.deliver(`in:${message.inboundId}`, renderUserMessage(message, { uuid }), step, uuid, receipt);
  }

  /** A `/clear` or `/compact` written now, with a fresh uuid. */
  deliverSlashCommand(command: FrameOf<'clear'> | FrameOf<'compact'>, step: Step, receipt?: Receipt): void {
    const uuid = randomUUID();
    const line = renderSlashCommand(`/${command.type}`, uuid);
    this.deliver(`cmd:${command.commandId}`, line, step, uuid, receipt);
  }

  /**
   * The hold rules' verdict on an arriving message or `/clear`, `/compact` (`core/delivery/hold.ts`): `held`
   * (kept for later, durably before the gateway's acknowledgement; always while a usage limit is waited
   * out, `limited`) or `write` (the caller writes it now).
   */
  admit(frame: HeldFrame, turnRoute: Route | undefined, shared: boolean, limited = false): 'held' | 'write' {
    const actions = this.#step({ kind: 'arrived', frame, turnRoute, shared, limited });
    return actions.some((a) => a.kind === 'hold') ? 'held' : 'write';
  }

  /**
   * Keeps a message the caller cannot write now for a reason outside the hold rules (the process is
   * dying; another process holds the session, `io/terminal/gate.ts`): held like any held item, in order.
   */
  hold(key: string, frame: HeldFrame): void {
    const record = this.#host.record;
    record.remember(key);
    record.setHeld([...record.held, frame]);
    this.#host.persist(true);
    this.#options.log.info({ type: frame.type, held: record.held.length }, 'held until the CLI can take it');
  }

  /**
   * Puts messages the last process never took ahead of everything held, for the next process; durable
   * with the exit's frames (the supervisor persists right after).
   */
  holdFirst(messages: readonly FrameOf<'user_message'>[]): void {
    if (messages.length === 0) return;
    this.#step({ kind: 'kept_first', messages });
    this.#options.log.info(
      { messages: messages.length },
      'kept for the next process: never taken by a model call',
    );
  }

  /**
   * Writes held items in order while the release rule (`core/delivery/hold.ts`) allows. A process that died is
   * not written to: its exit check keeps these for the next process or reports them.
   */
  releaseHeld(): void {
    const { record, session, supervisor } = this.#host;
    if (record.held.length === 0) return;
    const writable = supervisor.writable() && !session.limited; // waiting out a usage limit: nothing goes in
    this.#step({ kind: 'release', writable, idle: !session.running });
  }

  /** Reports every held item as not done (the process is gone, or it never started). */
  dropHeld(reason: string): void {
    this.#dropReason = reason;
    this.#step({ kind: 'drop' });
  }

  /**
   * Starts settling the intent a crash left, if any: from now on stdout is watched for its `queued`
   * ({@link noteQueued}). Call before the adoption's first read of stdout. The frames the write announced
   * need nothing here: they were stored in the same durable write as the intent, so the outbox holds
   * (and resends) them.
   */
  beginSettle(): void {
    const intent = this.#host.record.intent;
    if (!intent) return;
    this.#step({ kind: 'settle_begun', uuid: intent.uuid, read: intent.read === true });
  }

  /** Stdout showed the CLI reading the line with this uuid (`command_lifecycle` `queued`). */
  noteQueued(uuid: string): void {
    if (!this.#settling || uuid !== this.#settling.uuid) return;
    // Saved with the offset that moves past this line (see `Intent.read`).
    this.#host.record.markIntentRead();
    this.#step({ kind: 'queued', uuid });
  }

  /**
   * Settles a write that was in progress when the last bridge died (see the module comment): writes the
   * line again only if the CLI never read it, then clears the intent and lets held items go. Resolves true
   * when it wrote an `initialize` (the fence), so the caller need not write another.
   */
  async settle(): Promise<boolean> {
    const { record, session, supervisor } = this.#host;
    if (!record.intent) return false;
    if (!this.#settling) this.beginSettle();
    const clock = this.#options.clock;
    try {
      const actions = this.#step({ kind: 'settle', at: clock.now(), alive: supervisor.child !== undefined });
      // The fence's answer (or the line's `queued`) arrives on stdout: read it until the rules decide.
      while (this.#settling?.fenceDeadline !== undefined) {
        await clock.sleep(20);
        this.#host.pump();
        const answered = this.#fence !== undefined && !session.awaitsControl(this.#fence);
        this.#step({ kind: 'tick', at: clock.now(), alive: supervisor.child !== undefined, answered });
      }
      return actions.some((a) => a.kind === 'write_fence');
    } finally {
      // Settled, or failed while settling: held items wait for it no longer.
      this.#settling = undefined;
      this.#fence = undefined;
    }
  }

  /**
   * Feeds the hold rules one event (their held list is the record's) and performs the actions they
   * return, in order; returns them for the caller that needs the verdict.
   */
  #step(event: HoldEvent): readonly HoldAction[] {
    const record = this.#host.record;
    const before = record.held;
    const step = holdStep({ held: before, settling: this.#settling }, event);
    this.#settling = step.state.settling;
    // A release takes its items off the list one by one, each just before its write (see `release`).
    const releasing = step.actions.some((a) => a.kind === 'release');
    if (step.state.held !== before && !releasing) record.setHeld(step.state.held);
    for (const action of step.actions) this.#perform(action);
    return step.actions;
  }

  #perform(action: HoldAction): void {
    const { record, session, supervisor } = this.#host;
    const log = this.#options.log;
    switch (action.kind) {
      case 'hold': {
        const frame = action.frame;
        record.remember(keyOf(frame));
        this.#host.persist(true);
        log.info({ type: frame.type, held: record.held.length }, 'held behind a running turn');
        return;
      }
      case 'write':
        // The caller writes it (it knows the receipt that acknowledges it).
        return;
      case 'release': {
        const frame = action.frame;
        // Off the list before its write, which persists: a crash after it settles the intent instead.
        record.setHeld(action.rest);
        if (frame.type === 'user_message') {
          this.deliverMessage(frame, session.acceptUserMessage(frame, this.#options.clock.now()));
        } else {
          this.deliverSlashCommand(frame, session.acceptSlashCommand(frame.commandId, frame.route) as Step);
        }
        return;
      }
      case 'dropped': {
        this.#host.emit(droppedFrames(action.frames, this.#dropReason));
        this.#host.persist(true);
        return;
      }
      case 'write_fence': {
        const fence = session.control('initialize', undefined);
        this.#fence = fence.requestId;
        supervisor.writeAll(fence.writes);
        return;
      }
      case 'settled': {
        this.#fence = undefined;
        const intent = record.intent;
        if (!intent) return;
        if (action.why === 'fence_timeout') {
          log.warn({ uuid: intent.uuid }, 'the Claude process did not answer the delivery fence in time');
        }
        const child = supervisor.child;
        if (action.rewrite && child) {
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
        log.info(
          { key: intent.key, rewritten: action.rewrite && child !== undefined },
          'settled a write from before a crash',
        );
        record.setIntent(undefined);
        this.#host.persist(true);
        return;
      }
      default:
        action satisfies never;
    }
  }
}

/** The delivered-key of a held frame (the one `commands.ts` checks). */
function keyOf(frame: HeldFrame): string {
  return frame.type === 'user_message' ? `in:${frame.inboundId}` : `cmd:${frame.commandId}`;
}
