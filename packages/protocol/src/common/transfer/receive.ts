/**
 * The receiving side of a file transfer, as pure rules over what the receiver's disk holds: the shell
 * (`node/transfer.ts`) looks (is the whole file there, how long is the `.part`), asks these rules, and
 * does what they say. The receiver keeps nothing else: after a restart its disk is the whole state.
 *
 * Invariants:
 * - A file appears under its name only whole and with the offer's checksum; until then its bytes are in
 *   `<name>.part`, appended in order (a chunk not at the end of the part is not written, only answered
 *   with where the part ends).
 * - An offer of a file already whole (same size and checksum) is answered `done` at once: a transfer the
 *   sender repeats after a restart or a lost verdict costs nothing and yields the same path.
 * - A file over the receiver's cap is refused before a byte is written.
 * - A whole file is never replaced: an offer under the name of another file (another size or checksum)
 *   is refused. Names are unique on the sending side, so only a peer naming this side's own files (an
 *   attachment, a webhook's payload) to overwrite them meets this.
 */

/** What the receiver's disk holds for one transfer. */
export interface ReceiverDisk {
  /** The whole file under its name, if there is one: its size, and its checksum when that is the offer's. */
  whole?: { size: number; sha256?: string | undefined } | undefined;
  /** Bytes in `<name>.part` (0 when there is none). */
  partBytes: number;
}

/** What an offer is answered with. */
export type OfferAnswer =
  | { kind: 'refuse'; error: string }
  | { kind: 'have' }
  /**
   * Keep the part's first `from` bytes (cut the rest) and ask for what follows; `whole` when those are
   * every byte already (an empty file, or a crash before the part was named): check it and name it.
   */
  | { kind: 'resume'; from: number; whole: boolean };

/** The answer to an offer of `size` bytes hashing to `sha256`, given the disk; `maxBytes` is the cap. */
export function answerOffer(
  offer: { size: number; sha256: string },
  disk: ReceiverDisk,
  maxBytes: number,
): OfferAnswer {
  if (offer.size > maxBytes)
    return {
      kind: 'refuse',
      error: `the file is ${offer.size} bytes, over the ${maxBytes}-byte limit for files here: send a smaller one`,
    };
  if (disk.whole) {
    if (disk.whole.size === offer.size && disk.whole.sha256 === offer.sha256) return { kind: 'have' };
    return { kind: 'refuse', error: 'another file of that name is here already: send it under a new name' };
  }
  // A part longer than the file is not this file's: start again.
  const from = disk.partBytes <= offer.size ? disk.partBytes : 0;
  return { kind: 'resume', from, whole: from === offer.size };
}

/** What a chunk is answered with. */
export type ChunkAnswer =
  /** Not where the part ends (a resend, or out of an older offer): write nothing, say where it ends. */
  | { kind: 'skip'; received: number }
  | { kind: 'refuse'; error: string }
  /** Append it; `whole` when the part then has every byte (check the checksum, then name it). */
  | { kind: 'append'; received: number; whole: boolean };

/** The answer to a chunk at `offset` of `length` bytes, for an offer of `size`, with `partBytes` on disk. */
export function answerChunk(
  chunk: { offset: number; length: number },
  size: number,
  partBytes: number,
): ChunkAnswer {
  if (chunk.offset !== partBytes) return { kind: 'skip', received: partBytes };
  const received = partBytes + chunk.length;
  if (received > size) return { kind: 'refuse', error: `a chunk ran past the offered ${size} bytes` };
  return { kind: 'append', received, whole: received === size };
}
