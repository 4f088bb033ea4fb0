/**
 * How a turn's reply is presented, decided in this one place, when the message that opens it comes in,
 * and carried from there: stored on the message's entry in the turn machine, then on its turn, then in
 * the `open` action the reply is built from. Nothing after decides it again (`test/layout.test.ts`).
 *
 * - `draft`: a private chat with rich replies — the answer streams as an ephemeral draft and lands as
 *   one rich message; the message is acknowledged with a "Thinking…" draft.
 * - `edit`: a group with rich replies — the answer's first message is sent when its first text is
 *   ready, then edited into the rich answer.
 * - `classic`: `replies: classic` (the agent's, or the conversation's `/settings`), a server without
 *   rich messages (learnt once per run), or a lane's turn (a webhook's or schedule's, which read
 *   untrusted input: no link previews and no images, so a planted URL is never fetched unasked) —
 *   plain live edits, then the HTML render.
 *
 * One refinement when the reply opens: a draft whose turn already owns a message (its opener's marker
 * message, sent by a previous version or when the bridge was away) is edited into the answer as in a
 * group, so that message is neither stranded nor deleted ({@link openedAs}).
 */

/** How a turn's reply is shown. */
export type ReplyPresentation = 'draft' | 'edit' | 'classic';

/** What the decision reads, each a fact at the moment the message comes in. */
export interface PresentationView {
  /** The message's conversation: a private chat has a positive id; a lane's turn names its lane. */
  route: { chatId: number; lane?: string | undefined };
  /** The conversation's `replies` (its `/settings` over the agent's). */
  replies: 'rich' | 'classic';
  /** The Bot API server answered "method not found" for rich messages (learnt once per run). */
  richMissing: boolean;
}

/** The presentation of a reply; see the module comment. */
export function decidePresentation(view: PresentationView): ReplyPresentation {
  if (view.route.lane !== undefined || view.replies === 'classic' || view.richMissing) return 'classic';
  return view.route.chatId > 0 ? 'draft' : 'edit';
}

/** The presentation a reply opens with: a draft that owns messages already is edited into the answer. */
export function openedAs(decided: ReplyPresentation, messageIds: readonly number[]): ReplyPresentation {
  return decided === 'draft' && messageIds.length > 0 ? 'edit' : decided;
}
