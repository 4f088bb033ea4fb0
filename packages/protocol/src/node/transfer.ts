/**
 * Files over the protocol: the shell of the transfer rules (`common/transfer/`), one per side of an agent
 * whose gateway and bridge share no disk. It sends a file of this side's exchange directory to the peer
 * ({@link TransferPeer.put}: resolves with the path the peer keeps it under) and takes the peer's files
 * into this side's exchange directory ({@link TransferPeer.frame}).
 *
 * Contract:
 * - `put` resolves only once the peer said the file is whole (its checksum matched) or refused it; it
 *   waits across dropped links, resuming from what the peer holds. Two `put`s of one name share one
 *   transfer. The source must not change while it is sent: it is a copy in this side's exchange.
 * - Received files follow `exchange.ts`: they appear under their name only whole, with the exchange's
 *   file mode, directly in its directory, where the side's own checks (`openExchangeFile`) accept them.
 * - A chunk is read from disk when it is due, never the whole file at once; each frame is written with
 *   the endpoint's backpressure, so the side's other frames go between two chunks.
 * - Frames of one received transfer are handled in order, one at a time, whoever calls `frame`.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  appendFile,
  chmod,
  type FileHandle,
  lstat,
  open,
  rename,
  stat,
  truncate,
  unlink,
} from 'node:fs/promises';
import { join } from 'node:path';
import { type Clock, systemClock, type TimerHandle } from '../common/clock.js';
import { describeError, type Logger } from '../common/logger.js';
import type { TransferFrame } from '../common/messages/frame.js';
import { answerChunk, answerOffer, type ReceiverDisk } from '../common/transfer/receive.js';
import {
  DEFAULT_TRANSFER_LIMITS,
  type SendAction,
  type SendEvent,
  type SendStep,
  startSend,
  stepSend,
  type TransferLimits,
} from '../common/transfer/send.js';
import { type ExchangeOptions, exchangeModes } from './exchange.js';

/**
 * What {@link TransferPeer.put} ends with: the peer's path, or why not (`stopped`: this side stopped
 * first, and the file may go at its next start).
 */
export type PutOutcome = { ok: true; path: string } | { ok: false; error: string; stopped?: boolean };

/** Options of {@link createTransferPeer}. */
export interface TransferPeerOptions {
  /** Where received files are kept (this side's exchange, prepared by the service). */
  exchange: ExchangeOptions;
  /** The largest file this side takes. */
  maxBytes: number;
  /** Writes a frame to the peer (dropped while disconnected); resolves when the socket can take more. */
  send(frame: TransferFrame): Promise<void>;
  /** Whether the peer is connected now. */
  connected(): boolean;
  limits?: Partial<TransferLimits>;
  clock?: Clock;
  logger: Logger;
}

/** The handle; see the module comment. */
export interface TransferPeer {
  /** Sends the file at `source` under `name` (its name in this side's exchange). Never rejects. */
  put(source: string, name: string): Promise<PutOutcome>;
  /** A transfer frame from the peer. */
  frame(frame: TransferFrame): Promise<void>;
  /** The link came up or went down (the endpoint's connection change). */
  connection(up: boolean): void;
  /** Ends every transfer under way (`put`s resolve as not sent); received parts stay for the next start. */
  stop(): void;
}

interface Outgoing {
  name: string;
  source: string;
  sha256: string;
  step: SendStep;
  handle: FileHandle;
  timer: TimerHandle | undefined;
  /** Actions are performed in order, one at a time. */
  work: Promise<void>;
  resolve(outcome: PutOutcome): void;
}

interface Incoming {
  size: number;
  sha256: string;
  received: number;
}

/** Creates a peer; it does nothing until a `put` or a frame. */
export function createTransferPeer(options: TransferPeerOptions): TransferPeer {
  const clock = options.clock ?? systemClock;
  const limits: TransferLimits = { ...DEFAULT_TRANSFER_LIMITS, ...options.limits };
  const log = options.logger;
  const outgoing = new Map<string, Outgoing>();
  const putting = new Map<string, Promise<PutOutcome>>();
  const incoming = new Map<string, Incoming>();
  /** Per received name: its frames handled one at a time. */
  const receiving = new Map<string, Promise<void>>();
  const partOf = (name: string): string => join(options.exchange.dir, `${name}.part`);
  const send = (frame: TransferFrame): Promise<void> =>
    options.send(frame).catch((err: unknown) => {
      log.warn(
        { event: 'transfer_frame_not_sent', type: frame.type, err: describeError(err) },
        'transfer frame lost',
      );
    });

  const apply = (out: Outgoing, step: SendStep): void => {
    out.step = step;
    clock.clearTimeout(out.timer);
    out.timer =
      step.wakeAt === undefined
        ? undefined
        : clock.setTimeout(() => event(out, { kind: 'tick' }), Math.max(0, step.wakeAt - clock.now()));
    for (const action of step.actions) {
      // A failed read or write ends the transfer: the chain must not stop on a rejection, silently.
      out.work = out.work
        .then(() => perform(out, action))
        .catch((err: unknown) =>
          finish(out, { ok: false, error: `the file could not be sent: ${describeError(err)}` }),
        );
    }
  };
  const event = (out: Outgoing, happened: SendEvent): void => {
    if (outgoing.get(out.name) !== out) return;
    apply(out, stepSend(out.step.state, happened, clock.now(), limits));
  };

  const perform = async (out: Outgoing, action: SendAction): Promise<void> => {
    switch (action.kind) {
      case 'offer':
        await send({
          type: 'transfer_offer',
          transferId: out.name,
          size: out.step.state.size,
          sha256: out.sha256,
        });
        return;
      case 'chunk': {
        // Stale once the transfer offered again or ended: its chunks are sent again from the answer.
        if (outgoing.get(out.name) !== out || out.step.state.phase !== 'send') return;
        const data = Buffer.alloc(action.length);
        const { bytesRead } = await out.handle.read(data, 0, action.length, action.offset);
        if (bytesRead !== action.length) {
          finish(out, { ok: false, error: `${out.source} got shorter while it was sent` });
          return;
        }
        await send({
          type: 'transfer_chunk',
          transferId: out.name,
          offset: action.offset,
          data: data.toString('base64'),
        });
        return;
      }
      case 'finish':
        finish(out, action.ok ? { ok: true, path: action.path } : { ok: false, error: action.error });
        return;
    }
  };

  const finish = (out: Outgoing, outcome: PutOutcome): void => {
    if (outgoing.get(out.name) !== out) return;
    outgoing.delete(out.name);
    clock.clearTimeout(out.timer);
    void out.handle.close().catch(() => {});
    log.info({ event: 'transfer_sent', name: out.name, ok: outcome.ok }, 'file transfer ended');
    out.resolve(outcome);
  };

  const begin = async (source: string, name: string): Promise<PutOutcome> => {
    let handle: FileHandle;
    try {
      handle = await open(source, 'r');
    } catch (err) {
      return { ok: false, error: `${source} cannot be read: ${describeError(err)}` };
    }
    let size: number;
    let sha256: string;
    try {
      size = (await handle.stat()).size;
      sha256 = await hashFile(source);
    } catch (err) {
      await handle.close().catch(() => {});
      return { ok: false, error: `${source} cannot be read: ${describeError(err)}` };
    }
    const first = startSend(size, options.connected(), clock.now(), limits);
    return new Promise<PutOutcome>((resolve) => {
      const out: Outgoing = {
        name,
        source,
        sha256,
        handle,
        step: first,
        timer: undefined,
        work: Promise.resolve(),
        resolve,
      };
      outgoing.set(name, out);
      apply(out, first);
    });
  };

  /** Handles one received frame; frames of one name are chained by the caller. */
  const receive = async (frame: TransferFrame): Promise<void> => {
    const name = frame.transferId;
    switch (frame.type) {
      case 'transfer_offer': {
        const answer = answerOffer(frame, await diskOf(name, frame.size), options.maxBytes);
        if (answer.kind === 'refuse') {
          incoming.delete(name);
          await send({ type: 'transfer_done', transferId: name, ok: false, error: answer.error });
          return;
        }
        if (answer.kind === 'have') {
          incoming.delete(name);
          await send({
            type: 'transfer_done',
            transferId: name,
            ok: true,
            path: join(options.exchange.dir, name),
          });
          return;
        }
        const entry = { size: frame.size, sha256: frame.sha256, received: answer.from };
        incoming.set(name, entry);
        if (answer.from === 0) await appendFile(partOf(name), '', { mode: 0o600 });
        await truncate(partOf(name), answer.from);
        if (answer.from > 0)
          log.info({ event: 'transfer_resumed', name, from: answer.from }, 'resuming a file');
        if (answer.whole) {
          await complete(name, entry);
          return;
        }
        await send({ type: 'transfer_ack', transferId: name, received: answer.from });
        return;
      }
      case 'transfer_chunk': {
        const entry = incoming.get(name);
        // Not offered in this process's life: the sender offers again when it hears nothing.
        if (!entry) return;
        const data = Buffer.from(frame.data, 'base64');
        const answer = answerChunk({ offset: frame.offset, length: data.length }, entry.size, entry.received);
        if (answer.kind === 'skip') {
          await send({ type: 'transfer_ack', transferId: name, received: answer.received });
          return;
        }
        if (answer.kind === 'refuse') {
          incoming.delete(name);
          await unlink(partOf(name)).catch(() => {});
          await send({
            type: 'transfer_done',
            transferId: name,
            ok: false,
            error: answer.error,
            retry: true,
          });
          return;
        }
        await appendFile(partOf(name), data);
        entry.received = answer.received;
        if (answer.whole) await complete(name, entry);
        else await send({ type: 'transfer_ack', transferId: name, received: answer.received });
        return;
      }
      case 'transfer_ack': {
        const out = outgoing.get(name);
        if (out) event(out, { kind: 'ack', received: frame.received });
        return;
      }
      case 'transfer_done': {
        const out = outgoing.get(name);
        if (!out) return;
        event(
          out,
          frame.ok && frame.path !== undefined
            ? { kind: 'done', ok: true, path: frame.path }
            : {
                kind: 'done',
                ok: false,
                error: frame.error ?? 'the peer refused the file',
                retry: frame.retry === true,
              },
        );
        return;
      }
    }
  };

  /** The part holds every byte: named if its checksum is the offer's, else dropped for a new try. */
  const complete = async (name: string, entry: Incoming): Promise<void> => {
    incoming.delete(name);
    const part = partOf(name);
    const sha256 = await hashFile(part);
    if (sha256 !== entry.sha256) {
      await unlink(part).catch(() => {});
      log.warn({ event: 'transfer_checksum', name }, 'a received file did not match its checksum: dropped');
      await send({
        type: 'transfer_done',
        transferId: name,
        ok: false,
        error: 'the bytes received did not match the file’s checksum',
        retry: true,
      });
      return;
    }
    await chmod(part, exchangeModes(options.exchange).fileMode);
    const path = join(options.exchange.dir, name);
    await rename(part, path);
    log.info({ event: 'transfer_received', name, bytes: entry.size }, 'file received whole');
    await send({ type: 'transfer_done', transferId: name, ok: true, path });
  };

  /** What the disk holds for `name` (the whole file is hashed only when its size is the offer's). */
  const diskOf = async (name: string, size: number): Promise<ReceiverDisk> => {
    const path = join(options.exchange.dir, name);
    const whole = await lstat(path).catch(() => undefined);
    const part = await stat(partOf(name)).catch(() => undefined);
    const sha256 = whole?.isFile() && whole.size === size ? await hashFile(path) : undefined;
    return {
      // Anything under the name (a link, a directory too) is a file this side must not replace.
      whole: whole ? { size: whole.isFile() ? whole.size : -1, sha256 } : undefined,
      partBytes: part?.isFile() ? part.size : 0,
    };
  };

  return {
    put(source, name) {
      const known = putting.get(name);
      if (known) return known;
      const work = begin(source, name)
        .catch((err: unknown): PutOutcome => ({ ok: false, error: describeError(err) }))
        .finally(() => putting.delete(name));
      putting.set(name, work);
      return work;
    },
    frame(frame) {
      const name = frame.transferId;
      const next = (receiving.get(name) ?? Promise.resolve()).then(() =>
        receive(frame).catch((err: unknown) => {
          log.error({ event: 'transfer_failed', name, err: describeError(err) }, 'a transfer frame failed');
        }),
      );
      receiving.set(name, next);
      void next.then(() => {
        if (receiving.get(name) === next) receiving.delete(name);
      });
      return next;
    },
    connection(up) {
      for (const out of [...outgoing.values()]) event(out, { kind: 'link', up });
    },
    stop() {
      for (const out of [...outgoing.values()])
        finish(out, { ok: false, error: 'the service is stopping', stopped: true });
    },
  };
}

/** SHA-256 of a file, hex, read as a stream. */
async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
