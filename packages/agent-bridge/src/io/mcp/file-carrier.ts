/**
 * The agent's files to a gateway on another host (issue 29): when the two sides share no disk, each copy
 * in the bridge's exchange crosses as a protocol transfer (protocol's `node/transfer.ts`) before its
 * `file_send`, and the frame goes with the paths the gateway keeps the files under. The outbox's own
 * entry keeps the bridge's paths (its copies are deleted from there once Telegram has them).
 *
 * Exactly once rests where it rests locally: the gateway uploads once per `fileId`. A bridge restarted
 * mid-transfer emits the entry again (`FileOutbox.resend`), the transfer resumes from what the gateway
 * holds (or finds the file whole there) and the `file_send` repeats under the same id. Sends keep their
 * order: one waits behind the one before it, across a dropped link.
 */
import { basename } from 'node:path';
import type { FrameOf, Logger, TransferPeer } from '@switchyard/protocol';

/** What the carrier needs. */
export interface FileCarrierOptions {
  transfers: Pick<TransferPeer, 'put'>;
  /** Hands the `file_send` (with the gateway's paths) to the channel. */
  emit(frame: FrameOf<'file_send'>): void;
  /** A file the gateway refused for good settles its call as not sent, with the reason. */
  settle(frame: FrameOf<'file_sent'>): void;
  log: Logger;
}

/** An `emit` for `file_send` that carries the files first; see the module comment. */
export function createFileCarrier(options: FileCarrierOptions): (frame: FrameOf<'file_send'>) => void {
  let last: Promise<void> = Promise.resolve();
  return (frame) => {
    last = last.then(async () => {
      const files: FrameOf<'file_send'>['files'] = [];
      for (const file of frame.files) {
        const put = await options.transfers.put(file.path, basename(file.path));
        if (put.ok) {
          files.push({ ...file, path: put.path });
          continue;
        }
        // Stopping: the entry stays in the outbox and is emitted again at the next start.
        if (put.stopped) return;
        options.log.warn({ fileId: frame.fileId, error: put.error }, 'the gateway did not take a file');
        options.settle({
          type: 'file_sent',
          fileId: frame.fileId,
          ok: false,
          error: put.error.slice(0, 2000),
        });
        return;
      }
      options.emit({ ...frame, files });
    });
  };
}
