/**
 * Answers in turn order: per conversation, a chain of the turns' replies, each link settled when its
 * reply is rendered or given up. A reply queues no Bot API call before the link before it has settled,
 * so a turn's final message (rich or classic, however many calls its render takes) appears before any
 * later turn's answer in the same conversation, whatever else the chat's courier lane holds.
 *
 * Bounded: a conversation's entry leaves once its newest link has settled.
 */

/** One reply's place in its conversation's chain. */
export interface AnswerLink {
  /** The previous reply of the conversation, while it has not settled; undefined when there is none. */
  readonly after: Promise<void> | undefined;
  /** This reply has settled: the next one may go. Idempotent. */
  settle(): void;
}

/** The chains, one per conversation (by lane key). */
export interface AnswerOrder {
  /** Appends a reply to the chain of `lane` (its conversation's lane key). */
  link(lane: string): AnswerLink;
}

/** Creates the chains; one per gateway. */
export function createAnswerOrder(): AnswerOrder {
  const newest = new Map<string, Promise<void>>();
  return {
    link(lane) {
      const after = newest.get(lane);
      let resolve!: () => void;
      const mine = new Promise<void>((r) => {
        resolve = r;
      });
      newest.set(lane, mine);
      return {
        after,
        settle() {
          resolve();
          if (newest.get(lane) === mine) newest.delete(lane);
        },
      };
    },
  };
}
