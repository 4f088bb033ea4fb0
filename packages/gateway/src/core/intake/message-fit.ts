/**
 * What a Telegram client chose — a sender's name, a file's name and MIME type, quoted or forwarded
 * text — is cut to the protocol's `user_message` limits ({@link USER_MESSAGE_LIMITS}) at intake, so a
 * user's message never fails the frame's validation later, where it would stay in the inbox and be
 * offered again at every boot. A message that still cannot be passed on is the user's to hear about
 * ({@link reportNotForwarded}), and is not offered again.
 *
 * Cuts are in UTF-16 units, the schema's measure, and never leave half a surrogate pair.
 */
import { type FrameOf, ProtocolError, type Route, USER_MESSAGE_LIMITS } from '@switchyard/protocol/common';

/** `text` in at most `max` UTF-16 units, without a lone high surrogate at the cut. */
export function fit(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** The frame with every client-supplied field cut to its limit. */
export function fitUserMessage(frame: FrameOf<'user_message'>): FrameOf<'user_message'> {
  const L = USER_MESSAGE_LIMITS;
  const { sender, replyTo, forwardedFrom } = frame;
  return {
    ...frame,
    sender: {
      ...sender,
      name: fit(sender.name, L.senderName),
      ...(sender.username !== undefined ? { username: fit(sender.username, L.username) } : {}),
    },
    text: fit(frame.text, L.text),
    attachments: frame.attachments.slice(0, L.attachments).map((a) => ({
      ...a,
      ...(a.name !== undefined ? { name: fit(a.name, L.fileName) } : {}),
      ...(a.mime !== undefined ? { mime: fit(a.mime, L.mime) } : {}),
    })),
    ...(replyTo
      ? {
          replyTo: {
            ...replyTo,
            ...(replyTo.text !== undefined ? { text: fit(replyTo.text, L.quote) } : {}),
          },
        }
      : {}),
    ...(forwardedFrom
      ? { forwardedFrom: { ...forwardedFrom, name: fit(forwardedFrom.name, L.forwardName) } }
      : {}),
  };
}

/** Said to the user when their message cannot be passed to the agent at all. */
export function unforwardableText(problem: string): string {
  return `✗ This message cannot be passed to the agent (${problem.slice(0, 300)}). Send it again in another form.`;
}

/** What {@link reportNotForwarded} acts through. */
export interface NotForwardedDeps {
  /** The turns: a refused message is marked unread and its marker says why. */
  turns: { refused(inboundIds: readonly string[], reason: string): void } | undefined;
  /** Whether the message has a placeholder message to say it on. */
  hasPlaceholder(inboundId: string): boolean;
  /** Sends a plain message; never rejects. */
  reply(route: Route, text: string): void;
}

/**
 * A message the channel refused to queue: when `send` rejected with a {@link ProtocolError} (the frame
 * is invalid, so every later attempt fails the same way) it is marked unread, so boot stops offering
 * it, and the user is told — on its placeholder, or in a message of its own when it has none. Returns
 * whether it was; any other failure may pass another time and is left to the caller.
 */
export function reportNotForwarded(
  frame: FrameOf<'user_message'>,
  error: unknown,
  deps: NotForwardedDeps,
): boolean {
  const unread = notForwarded(frame, error);
  if (!unread || !deps.turns) return false;
  const placed = deps.hasPlaceholder(frame.inboundId);
  deps.turns.refused(unread.inboundIds, unread.reason);
  if (!placed)
    deps.reply(frame.route, unforwardableText(error instanceof Error ? error.message : String(error)));
  return true;
}

/**
 * For a message the channel refused to queue with a {@link ProtocolError}: the messages to mark unread,
 * and why; `undefined` for any other failure.
 */
export function notForwarded(
  frame: FrameOf<'user_message'>,
  error: unknown,
): { inboundIds: readonly string[]; reason: string } | undefined {
  if (!(error instanceof ProtocolError)) return undefined;
  return {
    inboundIds: [frame.inboundId],
    reason: `it could not be passed to the agent: ${error.message.slice(0, 300)}`,
  };
}
