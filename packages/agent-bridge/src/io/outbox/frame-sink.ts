/**
 * The one way frames leave the bridge for the gateway: in order, reliable ones tagged with what produced
 * them, live text deltas coalesced.
 *
 * Exactly once towards the gateway rests on two things here. Each reliable frame is appended to the outbox
 * under its conversation and a source tag — the stdout position `[generation, line end, index]` that produced
 * it, or `<command key>#<index>` for the frames a gateway command announced — so a restarted bridge can tell
 * which ones it already holds for each conversation. And frames whose stdout tag is at or before {@link
 * FrameSink.replayUntil} (the outbox's last tag when the bridge started) were appended before a crash: the
 * deterministic session machine regenerates them on the replay of stdout, and they are dropped here instead
 * of sent twice.
 */
import type { AppFrame, Endpoint, FrameOf, FrameOrigin, Logger } from '@switchyard/protocol';
import { describeError } from '@switchyard/protocol';
import { compareSource, type SourceTag } from './log-record.js';
import type { FileChannelStore } from './outbox.js';

/** A coalesced live delta is sent once it holds this many characters (see {@link FrameSink.flush}). */
const DELTA_FLUSH_CHARS = 16 * 1024;

/** The frames of a gateway command's write: tagged `<key>#<from + index>`. */
export interface InboundSource {
  key: string;
  from: number;
}

/** Sends frames to the gateway through the reliable channel and its durable store. */
export class FrameSink {
  /** Frames with a stdout source tag at or before this were appended before a crash; not sent again. */
  replayUntil: SourceTag | undefined;
  readonly #endpoint: Pick<Endpoint, 'send'>;
  readonly #log: Logger;
  readonly #conversation: string;
  #pendingDelta: FrameOf<'text_delta'> | undefined;

  /** A sink for one conversation's frames: their source tags are this conversation's. */
  constructor(
    endpoint: Pick<Endpoint, 'send'>,
    store: Pick<FileChannelStore, 'lastSource'>,
    log: Logger,
    conversation: string,
  ) {
    this.#endpoint = endpoint;
    this.#log = log;
    this.#conversation = conversation;
    this.replayUntil = store.lastSource(conversation);
  }

  /**
   * Hands frames to the channel in order; reliable ones are durable once this returns. `tag` gives a
   * frame's stdout source; `inbound` tags frames announced by a gateway command's write.
   */
  emit(frames: AppFrame[], tag?: (index: number) => SourceTag | undefined, inbound?: InboundSource): void {
    frames.forEach((frame, index) => {
      const source = tag?.(index);
      if (source && this.replayUntil && compareSource(source, this.replayUntil) <= 0) return;
      if (frame.type === 'text_delta') {
        // Coalesced, not sent one by one: see `flush`.
        let pending = this.#pendingDelta;
        if (pending && pending.turnId === frame.turnId && pending.blockId === frame.blockId) {
          pending.delta += frame.delta;
        } else {
          this.flush();
          pending = this.#pendingDelta = { ...frame };
        }
        if (pending.delta.length >= DELTA_FLUSH_CHARS) this.flush();
        return;
      }
      this.flush();
      const produced =
        source ?? (inbound !== undefined ? `${inbound.key}#${inbound.from + index}` : undefined);
      this.#send(
        frame,
        produced === undefined ? undefined : { conversation: this.#conversation, source: produced },
      );
    });
  }

  /**
   * Live text deltas of one read batch are merged per block and sent as one frame when anything else is
   * sent, when the batch ends (the caller flushes), or at {@link DELTA_FLUSH_CHARS}. The CLI writes a line
   * per few tokens; a frame (and an encode, and a socket write) per line was most of the bridge's
   * allocation while streaming, and so of its resident memory. Order is kept: a delta never overtakes a
   * reliable frame.
   */
  flush(): void {
    const frame = this.#pendingDelta;
    if (!frame) return;
    this.#pendingDelta = undefined;
    this.#send(frame);
  }

  /** Sends `frame`; its origin goes into the outbox with it, in the same call (`FrameOrigin`). */
  #send(frame: AppFrame, origin?: FrameOrigin): void {
    this.#endpoint
      .send(frame, origin)
      .catch((err: unknown) => this.#log.warn({ err: describeError(err) }, 'send failed'));
  }
}
