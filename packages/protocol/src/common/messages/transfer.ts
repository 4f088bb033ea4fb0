/**
 * Files over the protocol, for an agent whose gateway and bridge do not share a disk (a bridge on
 * another host): one file crosses as an offer, chunks and acks, and ends with the receiver's verdict.
 * These frames flow both ways (attachments to the bridge, the agent's files to the gateway) and are not
 * numbered: a transfer is its own acknowledged stream, resumed from what the receiver holds after a
 * dropped link (`common/transfer/`), so the channel's outbox never holds a file's bytes.
 *
 * Names: the transfer id is the sender's file name in its exchange directory (unique there, and safe as
 * a name), and the receiver keeps the file under the same name in its own: an offer made again after a
 * restart finds the whole file and is answered at once, which is what makes a transfer idempotent.
 */
import { z } from 'zod';

/** Largest file a transfer carries: Telegram's upload limit for documents, the largest of today's caps. */
export const TRANSFER_MAX_BYTES = 50 * 1024 * 1024;
/**
 * File bytes per chunk. Bounded so one transfer cannot hold the link: a chunk is one frame of ~64 KiB
 * (base64, since the wire refuses binary), and other frames are written between two chunks.
 */
export const TRANSFER_CHUNK_BYTES = 48 * 1024;
/** A chunk's `data` at most: base64 of {@link TRANSFER_CHUNK_BYTES}. */
const CHUNK_TEXT_MAX = Math.ceil(TRANSFER_CHUNK_BYTES / 3) * 4;

/** A transfer's id, which is also the file's name on both sides: no path, no leading dot. */
const transferId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/)
  .refine((name) => !name.endsWith('.part'), 'must not end in .part');
const offset = z.number().int().nonnegative().max(TRANSFER_MAX_BYTES);

/** The sender offers a file: its size and checksum. Answered with `transfer_ack` or `transfer_done`. */
const transferOffer = z.object({
  type: z.literal('transfer_offer'),
  transferId,
  size: offset,
  /** SHA-256 of the whole file, hex: the receiver keeps the file only if its bytes hash to this. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
/** Bytes `[offset, offset + decoded length)` of the file, base64. */
const transferChunk = z.object({
  type: z.literal('transfer_chunk'),
  transferId,
  offset,
  data: z.string().max(CHUNK_TEXT_MAX),
});
/** The receiver holds the file's first `received` bytes (after an offer: where to resume). */
const transferAck = z.object({
  type: z.literal('transfer_ack'),
  transferId,
  received: offset,
});
/**
 * The receiver's verdict: the file is whole at `path` (its checksum matched), or why not. `retry`: the
 * bytes did not hash to the offer's checksum and were dropped; the sender may offer the file again.
 */
const transferDone = z.object({
  type: z.literal('transfer_done'),
  transferId,
  ok: z.boolean(),
  path: z.string().min(1).max(4096).optional(),
  error: z.string().max(2000).optional(),
  retry: z.boolean().optional(),
});

/** The transfer frames' schemas, in the union's order. */
export const TRANSFER_FRAMES = [transferOffer, transferChunk, transferAck, transferDone] as const;
