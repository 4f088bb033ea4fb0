/**
 * Attachments to a bridge on another host (issue 29): when the two sides share no disk, a user's files
 * cross as protocol transfers (protocol's `node/transfer.ts`) before the message that names them, and the
 * message goes with the paths the bridge keeps them under. Local bridges keep the shared exchange
 * directory: their messages pass straight through.
 *
 * Contract:
 * - A message is handed to the channel only once each of its files is whole on the worker (checksum
 *   matched), so the bridge's acknowledgement of the message — which takes it out of the inbox — means
 *   its files are there. Until then its inbox row is `queued`: a gateway restarted meanwhile forwards it
 *   again at boot, and the transfer finds what the worker already holds.
 * - Messages keep their order: one waits behind the one before it, files or not, across a dropped link.
 * - A file the worker refuses (over its cap) is the message's refusal: a `ProtocolError`, so its sender
 *   is told, as for a message the channel refuses. A transfer cut by the gateway stopping is not: the
 *   row stays queued for the next start.
 */

import { basename } from 'node:path';
import { type FrameOf, type GatewayToBridge, ProtocolError, type TransferPeer } from '@switchyard/protocol';

/** What the carrier needs. */
export interface FileCarrierOptions {
  /** The channel's `send`. */
  send(frame: GatewayToBridge): Promise<void>;
  /** The transfers; absent: the bridge shares the exchange directory, and messages pass straight. */
  transfers?: Pick<TransferPeer, 'put'> | undefined;
}

/** A `send` for user messages that carries their files first when the bridge is remote. */
export function createFileCarrier(
  options: FileCarrierOptions,
): (frame: FrameOf<'user_message'>) => Promise<void> {
  const { transfers } = options;
  if (!transfers) return (frame) => options.send(frame);
  let last: Promise<unknown> = Promise.resolve();
  return (frame) => {
    const turn = last.then(async () => {
      if (frame.attachments.length === 0) return options.send(frame);
      const attachments = [];
      for (const attachment of frame.attachments) {
        const put = await transfers.put(attachment.path, basename(attachment.path));
        if (!put.ok) {
          const message = `its file ${attachment.name ?? basename(attachment.path)} did not reach the agent's host: ${put.error}`;
          throw put.stopped ? new Error(message) : new ProtocolError(message);
        }
        attachments.push({ ...attachment, path: put.path });
      }
      return options.send({ ...frame, attachments });
    });
    last = turn.catch(() => {});
    return turn;
  };
}
