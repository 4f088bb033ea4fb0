/**
 * One live connection between the gateway and a bridge: the handshake, sequence numbers and acks,
 * liveness pings, backpressure, and refusal of bad input. Socket setup (listen, connect, reconnect) is
 * in `server.ts` and `client.ts`; both hand a connected stream to this class. Its options and defaults
 * are `connection-options.ts`; how bytes reach the socket (encoding, corking, backpressure) is
 * `frame-writer.ts`.
 *
 * This file is longer than 400 lines because the invariants below are one argument over one set of
 * fields: the handshake, the cursor, the acks, the inbound queue and refusals each read and move the same
 * `#lastSeen`/`#storedSeen`/`#resync` state, and split across files the reasons they hold would be too.
 *
 * Invariants:
 * - Reliable frames are written in `seq` order on a connection: the resend after the handshake is queued
 *   before any frame sent later.
 * - Reliable input is delivered to the handler in order, each `seq` once per peer stream; a frame is
 *   acknowledged (and the peer cursor stored) only after the handler has returned.
 * - No numbered frame can stop the channel: one that is invalid, or whose handler still throws after
 *   its retries, is answered with a `refused` frame for its `seq`, reported, and counted as handled.
 * - Other bad input never throws out of here: it is answered with an `error` frame where the stream can
 *   still carry one, logged, and the connection is closed. The sender does not offer such input again
 *   (it is not numbered, or it is not a frame at all), so closing does not jam the channel.
 * - Before the handshake a peer may send only frames up to {@link HANDSHAKE_MAX_FRAME_BYTES}, and must
 *   complete it within `handshakeTimeoutMs`.
 * - Resync: the first numbered frame after a handshake may skip ahead of the cursor. The sender resends
 *   everything it still holds from the cursor the handshake gave it, so a frame it no longer holds was
 *   acknowledged (handled) in an earlier life of this side's state: this side lost its cursor, and
 *   continuing from the sender's oldest frame is the only way on. A gap anywhere else is an error.
 */
import type { Duplex } from 'node:stream';
import { type Clock, systemClock, type TimerHandle } from '../common/clock.js';
import { DEFAULT_MAX_FRAME_BYTES, FrameDecoder } from '../common/codec.js';
import { type HandshakeVersion, handshakeVersion, versionMismatchText } from '../common/handshake.js';
import { describeError, type Logger } from '../common/logger.js';
import {
  type AppFrame,
  type Frame,
  type FrameOf,
  PROTOCOL_VERSION,
  type ProtocolErrorCode,
  parseFrame,
  RELIABLE_TYPES,
  type RefusalCode,
} from '../common/messages/frame.js';
import {
  DEFAULT_HANDLER_RETRY_DELAYS_MS,
  handlerFailedText,
  type Inbound,
  invalidText,
  numberedFrame,
  type Refusal,
  runHandler,
  sequenceVerdict,
} from '../common/refusal.js';
import type { ChannelStore } from '../common/store.js';
import {
  type ConnectionOptions,
  CURSOR_RETRY_FIRST_MS,
  CURSOR_RETRY_MAX_MS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_PING_INTERVAL_MS,
  DEFAULT_PING_TIMEOUT_MS,
  HANDSHAKE_MAX_FRAME_BYTES,
  INBOUND_HIGH_WATER,
} from './connection-options.js';
import { FrameWriter } from './frame-writer.js';

/** What to do about the errors whose text does not already say it. */
const WHAT_TO_DO: Partial<Record<ProtocolErrorCode, string>> = {
  bad_frame: 'connect only a Switchyard gateway or bridge of the same release to this socket',
  bad_message: 'connect only a Switchyard gateway or bridge of the same release to this socket',
  too_large:
    'frames must stay under the limit (64 KiB until the handshake is done): run the same Switchyard release on both sides',
  sequence_gap: 'restart the peer: its handshake resends from the last frame this side handled',
  wrong_agent: "point the bridge at its own agent's socket (the socket path in the config)",
};

/**
 * The highest `seq` this process has written under each store's stream, over all its connections. A
 * peer's claim to have seen more (in its handshake or an ack) is capped at it: a frame numbered while
 * disconnected, or sent by an earlier life of this process, is resent rather than taken as received
 * (the peer drops what it already has by number).
 */
const sentUpTo = new WeakMap<ChannelStore, { streamId: string; seq: number }>();

/** What a peer can have seen of `store`'s stream: `claimed`, capped at what this process has written. */
function seenAtMost(store: ChannelStore, claimed: number): number {
  const sent = sentUpTo.get(store);
  return Math.min(claimed, sent?.streamId === store.streamId ? sent.seq : 0);
}

/** One live connection; created by the server or client around a connected socket. */
export class Connection {
  readonly #socket: Duplex;
  readonly #wire: FrameWriter;
  readonly #options: ConnectionOptions;
  readonly #decoder: FrameDecoder;
  readonly #log: Logger;
  #ready = false;
  #closed = false;
  #peerStreamId: string | undefined;
  #lastSeen = 0;
  /** The cursor the store durably holds; acks never run ahead of it (see `#storeCursor`). */
  #storedSeen = 0;
  #cursorRetry: TimerHandle | undefined;
  #cursorFailures = 0;
  #ackDue = false;
  #inbound: Promise<void> = Promise.resolve();
  #inboundQueued = 0;
  readonly #clock: Clock;
  #lastHeard: number;
  #pingTimer: TimerHandle | undefined;
  #handshakeTimer: TimerHandle | undefined;
  #pingNonce = 0;
  /** The ping whose pong is awaited, and when it was written (a round trip is measured once per ping). */
  #pingSentAt: { nonce: number; at: number } | undefined;
  /** Set by each handshake until the first new numbered frame: see the resync invariant. */
  #resync = false;

  constructor(socket: Duplex, options: ConnectionOptions) {
    this.#socket = socket;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#lastHeard = this.#clock.now();
    this.#decoder = new FrameDecoder(
      Math.min(HANDSHAKE_MAX_FRAME_BYTES, options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES),
    );
    this.#log = options.logger;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.#wire = new FrameWriter(socket, options.logger);
    socket.on('error', (err) => this.close(`socket error: ${describeError(err)}`));
    socket.on('close', () => this.close('peer closed the connection'));
    socket.on('end', () => {
      if (this.#decoder.pendingBytes > 0) {
        this.#log.warn(
          { event: 'truncated_frame', bytes: this.#decoder.pendingBytes },
          'stream ended inside a frame',
        );
      }
      this.close('peer ended the stream');
    });
    const interval = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
    const timeout = options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
    const ping = (): void => {
      this.#pingTimer = this.#clock.setTimeout(ping, interval);
      this.#checkLiveness(timeout);
    };
    this.#pingTimer = this.#clock.setTimeout(ping, interval);
    const handshakeTimeout = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.#handshakeTimer = this.#clock.setTimeout(
      () =>
        this.fail(
          'handshake_timeout',
          `no handshake within ${handshakeTimeout} ms of connecting: connect with a Switchyard bridge or gateway, ` +
            'which says hello at once',
        ),
      handshakeTimeout,
    );
    if (options.role === 'client') this.#wire.write(this.#handshake('hello'));
  }

  get ready(): boolean {
    return this.#ready && !this.#closed;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Writes an application frame (already numbered by the caller when reliable). Resolves when the socket
   * can take more; a caller that awaits it is slowed to the socket's pace.
   */
  write(frame: AppFrame): Promise<void> {
    if (!this.ready) return Promise.resolve();
    this.#writeNumbered(frame);
    return this.whenWritable();
  }

  /**
   * {@link write} for a frame its sender has encoded already (`bytes`, numbered `seq` when reliable):
   * each frame is encoded once between `send` and the socket.
   */
  writeEncoded(type: AppFrame['type'], seq: number | undefined, bytes: Buffer): Promise<void> {
    if (!this.ready) return Promise.resolve();
    this.#wire.writeBytes(bytes);
    this.#noteSent(type, seq);
    return this.whenWritable();
  }

  /** Resolves once the socket's buffer has drained below its high-water mark (or the connection closed). */
  whenWritable(): Promise<void> {
    return this.#wire.whenWritable();
  }

  /** Closes the connection; safe to call more than once. */
  close(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#clock.clearTimeout(this.#pingTimer);
    this.#clock.clearTimeout(this.#handshakeTimer);
    this.#clock.clearTimeout(this.#cursorRetry);
    this.#flushAck();
    this.#socket.end();
    // Give a final error frame a moment to leave, then make sure the socket is gone.
    this.#clock.setTimeout(() => this.#socket.destroy(), 100);
    this.#wire.close();
    this.#log.info({ event: 'connection_closed', reason }, 'protocol connection closed');
    this.#options.onClose?.(reason);
  }

  /**
   * Sends an error frame naming what was wrong (and, for the codes that mean a broken or foreign peer,
   * what to do), logs it, and closes the connection.
   */
  fail(code: ProtocolErrorCode, detail: string): void {
    if (this.#closed) return;
    const hint = WHAT_TO_DO[code];
    const message = hint === undefined ? detail : `${detail}; ${hint}`;
    this.#log.warn({ event: 'protocol_error', code, detail: message }, 'refusing peer input');
    if (!this.#ready) this.#options.onHandshakeRefused?.({ code, message });
    this.#wire.write({ type: 'error', code, message: message.slice(0, 2000) });
    this.close(`${code}: ${message}`);
  }

  #handshake(type: 'hello' | 'welcome'): Frame {
    const peer = this.#options.store.readPeer();
    return {
      type,
      version: PROTOCOL_VERSION,
      agent: this.#options.agent,
      instanceId: this.#options.instanceId,
      streamId: this.#options.store.streamId,
      ...(peer ? { peerStreamId: peer.streamId } : {}),
      lastSeen: peer?.lastSeen ?? 0,
      ...(this.#options.release !== undefined ? { release: this.#options.release } : {}),
      ...(this.#options.host !== undefined ? { host: this.#options.host } : {}),
    };
  }

  /** Refuses a peer of another protocol version, in words that name both sides (handshake.ts). */
  #refuseVersion(peer: HandshakeVersion): void {
    const self = { release: this.#options.release, host: this.#options.host };
    this.fail('version_mismatch', versionMismatchText(this.#options.role, self, peer));
  }

  /** Writes an application frame and, when it is numbered, records its `seq` as sent. */
  #writeNumbered(frame: AppFrame): void {
    this.#wire.write(frame);
    this.#noteSent(frame.type, (frame as { seq?: number }).seq);
  }

  /** Records a reliable frame's `seq` as written (see `sentUpTo`). */
  #noteSent(type: AppFrame['type'], seq: number | undefined): void {
    if (seq === undefined || !RELIABLE_TYPES.has(type)) return;
    const store = this.#options.store;
    const sent = sentUpTo.get(store);
    if (sent?.streamId !== store.streamId || sent.seq < seq)
      sentUpTo.set(store, { streamId: store.streamId, seq });
  }

  #checkLiveness(timeoutMs: number): void {
    if (this.#closed) return;
    const silentFor = this.#clock.now() - this.#lastHeard;
    if (silentFor >= timeoutMs) {
      this.#log.warn({ event: 'peer_silent', silentMs: silentFor }, 'peer stopped answering pings');
      this.close(`peer silent for ${silentFor} ms`);
      return;
    }
    if (!this.#ready) return;
    this.#pingSentAt = { nonce: ++this.#pingNonce, at: this.#clock.now() };
    this.#wire.write({ type: 'ping', nonce: this.#pingNonce });
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    this.#lastHeard = this.#clock.now();
    for (const event of this.#decoder.push(chunk)) {
      if (this.#closed) return;
      if (event.kind === 'error') {
        // A numbered frame that decoded but is not plain data is refused by seq, like an invalid one.
        const numbered = this.#ready ? numberedFrame(event.value) : undefined;
        if (!numbered) {
          this.fail(event.code, event.message);
          return;
        }
        this.#enqueue({ ...numbered, invalid: event.message });
        continue;
      }
      // Another version's handshake is refused for its version, whatever else its shape says.
      const claimed = this.#ready ? undefined : handshakeVersion(event.value);
      if (claimed !== undefined && claimed.version !== PROTOCOL_VERSION) {
        this.#refuseVersion(claimed);
        return;
      }
      const parsed = parseFrame(event.value);
      if (parsed.ok) {
        this.#onFrame(parsed.frame);
        continue;
      }
      const numbered = this.#ready ? numberedFrame(event.value) : undefined;
      if (numbered) {
        this.#enqueue({ ...numbered, invalid: parsed.message });
        continue;
      }
      this.fail(parsed.code, parsed.message);
      return;
    }
  }

  #onFrame(frame: Frame): void {
    if (!this.#ready) {
      this.#onHandshake(frame);
      return;
    }
    switch (frame.type) {
      case 'hello':
      case 'welcome':
        this.fail('bad_message', `unexpected ${frame.type} after the handshake`);
        return;
      case 'ack':
        this.#options.store.acknowledge(seenAtMost(this.#options.store, frame.seq));
        return;
      case 'ping':
        this.#wire.write({ type: 'pong', nonce: frame.nonce });
        return;
      case 'pong':
        if (frame.nonce === this.#pingSentAt?.nonce) {
          const ms = this.#clock.now() - this.#pingSentAt.at;
          this.#pingSentAt = undefined;
          this.#options.onRoundTrip?.(ms);
        }
        return;
      case 'refused':
        this.#onPeerRefused(frame);
        return;
      case 'error':
        this.#log.error(
          { event: 'peer_error', code: frame.code, detail: frame.message },
          'peer reported an error',
        );
        this.close(`peer error ${frame.code}: ${frame.message}`);
        return;
      default:
        this.#onAppFrame(frame);
    }
  }

  #onHandshake(frame: Frame): void {
    const expected = this.#options.role === 'server' ? 'hello' : 'welcome';
    if (frame.type === 'error') {
      this.#log.error(
        { event: 'peer_refused', code: frame.code, detail: frame.message },
        'peer refused the handshake',
      );
      this.close(`peer refused: ${frame.message}`);
      return;
    }
    if (frame.type !== expected) {
      this.fail('bad_message', `expected ${expected} first, got ${frame.type}`);
      return;
    }
    const hs = frame as FrameOf<'hello'> | FrameOf<'welcome'>;
    if (hs.version !== PROTOCOL_VERSION) {
      this.#refuseVersion({ version: hs.version, release: hs.release, host: hs.host });
      return;
    }
    if (hs.agent !== this.#options.agent) {
      this.fail('wrong_agent', `this socket serves agent "${this.#options.agent}", not "${hs.agent}"`);
      return;
    }
    const refusal = this.#options.admit?.(hs);
    if (refusal) {
      this.fail(refusal.code, refusal.message);
      return;
    }
    const store = this.#options.store;
    // The peer's stream: a new stream id means its state was reset, so our duplicate filter restarts.
    const cursor = store.readPeer();
    this.#peerStreamId = hs.streamId;
    if (cursor && cursor.streamId === hs.streamId) {
      this.#lastSeen = cursor.lastSeen;
      this.#storedSeen = cursor.lastSeen;
    } else {
      this.#lastSeen = 0;
      this.#storedSeen = 0;
      this.#storeCursor();
    }
    if (this.#options.role === 'server') this.#wire.write(this.#handshake('welcome'));
    // What the peer has of our stream; if it knows another stream of ours, it has none of this one.
    // Never more than this process has sent: see `sentUpTo`.
    const peerHas = hs.peerStreamId === store.streamId ? seenAtMost(store, hs.lastSeen) : 0;
    if (peerHas > 0) store.acknowledge(peerHas);
    this.#clock.clearTimeout(this.#handshakeTimer);
    this.#decoder.maxFrameBytes = this.#options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.#resync = true;
    this.#ready = true;
    const pending = store.pendingAfter(peerHas);
    for (const entry of pending) this.#writeNumbered({ ...entry.frame, seq: entry.seq } as AppFrame);
    this.#log.info(
      { event: 'handshake', peer: hs.instanceId, resent: pending.length, lastSeen: this.#lastSeen },
      'protocol connection ready',
    );
    this.#options.onReady?.(hs);
  }

  #onAppFrame(frame: AppFrame): void {
    const reliable = RELIABLE_TYPES.has(frame.type);
    const seq = reliable ? (frame as { seq?: number }).seq : undefined;
    if (reliable && seq === undefined) {
      this.fail('bad_message', `frame of type "${frame.type}" must carry seq`);
      return;
    }
    this.#enqueue({ frame, type: frame.type, seq });
  }

  #enqueue(item: Inbound): void {
    this.#inboundQueued++;
    if (this.#inboundQueued >= INBOUND_HIGH_WATER) this.#socket.pause();
    this.#inbound = this.#inbound.then(() => this.#deliver(item));
  }

  async #deliver(item: Inbound): Promise<void> {
    const { seq } = item;
    try {
      if (this.#closed) return;
      if (seq !== undefined) {
        const verdict = sequenceVerdict(seq, this.#lastSeen, this.#resync);
        if (verdict === 'duplicate') {
          this.#scheduleAck();
          return;
        }
        if (verdict === 'gap') {
          this.fail('sequence_gap', `expected seq ${this.#lastSeen + 1}, got ${seq}`);
          return;
        }
        if (verdict === 'resync') {
          this.#log.warn(
            { event: 'resync', from: this.#lastSeen, to: seq - 1 },
            'peer no longer holds the frames after our cursor: continuing from its oldest',
          );
        }
        this.#resync = false;
      }
      if (item.invalid !== undefined) {
        this.#refuse(item.seq, item.type, 'invalid', invalidText(this.#side(), item.invalid), undefined);
        return;
      }
      const delays =
        seq === undefined ? [] : (this.#options.handlerRetryDelaysMs ?? DEFAULT_HANDLER_RETRY_DELAYS_MS);
      const receipt =
        seq === undefined ? undefined : { cursor: { streamId: this.#peerStreamId as string, lastSeen: seq } };
      const failure = await runHandler(this.#options.onFrame, item.frame, receipt, delays, {
        log: this.#log,
        closed: () => this.#closed,
        clock: this.#clock,
      });
      if (this.#closed) return; // not acknowledged: offered again after the next handshake
      if (failure !== undefined) {
        if (seq === undefined) return; // not numbered: nothing waits for it
        const text = handlerFailedText(this.#side(), item.type, seq, failure);
        this.#refuse(seq, item.type, 'handler_failed', text, item.frame);
        return;
      }
      if (seq !== undefined) this.#handled(seq);
    } finally {
      this.#inboundQueued--;
      if (this.#inboundQueued < INBOUND_HIGH_WATER / 2 && this.#socket.isPaused()) this.#socket.resume();
    }
  }

  /** Marks `seq` handled: the cursor moves, is stored, and an ack is due. */
  #handled(seq: number): void {
    this.#lastSeen = seq;
    this.#storeCursor();
  }

  /**
   * Stores the cursor, then lets an ack go out. A store that cannot write (a full disk) is retried with
   * capped backoff and the process stays up: until a write succeeds the ack stays at the stored cursor,
   * so the peer keeps the frames handled since, and a crash meanwhile has them resent and handled again
   * rather than lost. Duplicates within this connection are still dropped by the cursor in memory.
   */
  #storeCursor(): void {
    if (this.#cursorRetry) return; // the pending retry stores the newest cursor
    const seen = this.#lastSeen;
    try {
      this.#options.store.writePeer({ streamId: this.#peerStreamId as string, lastSeen: seen });
    } catch (err) {
      this.#cursorFailures++;
      const delay = Math.min(CURSOR_RETRY_MAX_MS, CURSOR_RETRY_FIRST_MS * 2 ** (this.#cursorFailures - 1));
      if (this.#cursorFailures === 1 || delay === CURSOR_RETRY_MAX_MS) {
        this.#log.error(
          { event: 'cursor_write_failed', seq: seen, retryInMs: delay, err: describeError(err) },
          'cannot store the peer cursor (is the disk full?); retrying, frames stay unacknowledged meanwhile',
        );
      }
      this.#cursorRetry = this.#clock.setTimeout(() => {
        this.#cursorRetry = undefined;
        if (!this.#closed) this.#storeCursor();
      }, delay);
      return;
    }
    if (this.#cursorFailures > 0) {
      this.#log.info({ event: 'cursor_write_recovered', seq: seen }, 'the peer cursor is stored again');
    }
    this.#cursorFailures = 0;
    this.#storedSeen = seen;
    this.#scheduleAck();
  }

  /** Refuses a numbered frame from the peer: tells it, reports it, and moves past it. */
  #refuse(seq: number, type: string, code: RefusalCode, message: string, frame: AppFrame | undefined): void {
    this.#log.warn(
      { event: 'frame_refused', seq, type, code, detail: message },
      'refused a frame from the peer',
    );
    this.#wire.write({ type: 'refused', seq, code, message: message.slice(0, 2000) });
    this.#handled(seq);
    this.#report({ direction: 'received', seq, frameType: type, code, message, frame });
  }

  /** The peer refused one of our frames: it is handled as far as the channel goes. */
  #onPeerRefused(frame: FrameOf<'refused'>): void {
    const store = this.#options.store;
    const held = store.pendingAfter(frame.seq - 1)[0];
    const mine = held?.seq === frame.seq ? held.frame : undefined;
    this.#log.warn(
      {
        event: 'frame_refused_by_peer',
        seq: frame.seq,
        type: mine?.type,
        code: frame.code,
        detail: frame.message,
      },
      'the peer refused a frame; it is dropped',
    );
    store.acknowledge(seenAtMost(store, frame.seq));
    this.#report({
      direction: 'sent',
      seq: frame.seq,
      frameType: mine?.type,
      code: frame.code,
      message: frame.message,
      frame: mine,
    });
  }

  #report(refusal: Refusal): void {
    try {
      this.#options.onRefused?.(refusal);
    } catch (err) {
      this.#log.error({ event: 'on_refused_failed', err: describeError(err) }, 'onRefused threw');
    }
  }

  #side(): string {
    return this.#options.role === 'server' ? 'gateway' : 'bridge';
  }

  /** Acks are coalesced: one per burst of frames, sent once the burst has been handled. */
  #scheduleAck(): void {
    if (this.#ackDue) return;
    this.#ackDue = true;
    setImmediate(() => this.#flushAck());
  }

  #flushAck(): void {
    if (!this.#ackDue) return;
    this.#ackDue = false;
    if (this.#ready) this.#wire.write({ type: 'ack', seq: this.#storedSeen });
  }
}
