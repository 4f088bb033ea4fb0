/**
 * A turn's reply text as it grows: the blocks in the order they began, each the live deltas until its
 * authoritative text arrives, joined by blank lines (empty blocks left out).
 *
 * Why a class and not a `join` per delta: a reply grows by a few characters per delta and is read after
 * each one, so re-joining every block (and scanning the order for each delta) made a 20,000-character
 * answer cost time quadratic in its length. Here a delta to the last block — nearly every one — is an
 * append to the cached text (V8 concatenates strings as ropes, so appending is not a copy); only a delta
 * to an earlier block or an authoritative `text` (a few per turn) rebuilds it.
 */

/** The reply text of one turn; see the module comment. */
export class ReplyText {
  readonly #order: string[] = [];
  /** Every block's text but the newest one's, which is kept in `#lastText` (the hot path). */
  readonly #parts = new Map<string, string>();
  /** Blocks whose authoritative text arrived: later live deltas for them are stale. */
  readonly #final = new Set<string>();
  #lastId: string | undefined;
  #lastText = '';
  /** The joined text of every block before the newest one (valid unless `#dirty`). */
  #before = '';
  #dirty = false;

  /** Starts from the authoritative blocks known so far (a turn picked up after a restart). */
  constructor(blocks: readonly { id: string; text: string }[] = []) {
    for (const block of blocks) this.block(block.id, block.text);
  }

  /** A live delta of block `id`. False (and nothing changes) when the block is final already. */
  delta(id: string, delta: string): boolean {
    if (id === this.#lastId) {
      if (this.#final.has(id)) return false;
      // The hot path: one more piece of the block being streamed, one string append.
      this.#lastText += delta;
      return true;
    }
    if (this.#final.has(id)) return false;
    if (this.#parts.has(id)) {
      // A delta for an earlier block (rare): `#before` is rebuilt at the next read.
      this.#parts.set(id, (this.#parts.get(id) ?? '') + delta);
      this.#dirty = true;
      return true;
    }
    this.#open(id);
    this.#lastText = delta;
    return true;
  }

  /** The authoritative text of block `id`; replaces its deltas. */
  block(id: string, text: string): void {
    if (id !== this.#lastId && !this.#parts.has(id)) this.#open(id);
    this.#final.add(id);
    if (id === this.#lastId) {
      this.#lastText = text;
    } else {
      this.#parts.set(id, text);
      this.#dirty = true;
    }
  }

  /** The reply so far. */
  get text(): string {
    if (this.#dirty) {
      this.#before = this.#join(this.#order.slice(0, -1));
      this.#dirty = false;
    }
    if (this.#lastText === '') return this.#before;
    return this.#before === '' ? this.#lastText : `${this.#before}\n\n${this.#lastText}`;
  }

  /** A new block becomes the newest; the one before it moves to `#parts` (and into `#before`). */
  #open(id: string): void {
    if (this.#lastId !== undefined) {
      this.#parts.set(this.#lastId, this.#lastText);
      if (!this.#dirty && this.#lastText !== '') {
        this.#before = this.#before === '' ? this.#lastText : `${this.#before}\n\n${this.#lastText}`;
      }
    }
    this.#order.push(id);
    this.#lastId = id;
    this.#lastText = '';
  }

  #join(ids: readonly string[]): string {
    return ids
      .map((id) => this.#parts.get(id) ?? '')
      .filter((part) => part.length > 0)
      .join('\n\n');
  }
}
