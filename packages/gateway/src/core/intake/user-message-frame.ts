/**
 * A Telegram message as the `user_message` frame the bridge gets: who sent it, its text and saved files,
 * what it replies to or forwards and whose words those are, cut to the protocol's limits.
 */
import type { Attachment, FrameOf, Route } from '@switchyard/protocol/common';
import { repliedMessage } from './addressing.js';
import { fitUserMessage } from './message-fit.js';
import type { MessageShape } from './telegram-shapes.js';

/**
 * The `user_message` frame for a Telegram message: its sender, text, saved files and what it replies to
 * or forwards, every field the client chose cut to the protocol's limits (`message-fit.ts`).
 */
export function userMessageFrame(
  message: MessageShape,
  content: {
    inboundId: string;
    route: Route;
    text: string;
    attachments: Attachment[];
    /** Who wrote a quoted message (by sender id); the model is told when it is a third party. */
    authorOf?: (userId: number | undefined) => 'bot' | 'allowed' | 'third_party';
  },
): FrameOf<'user_message'> {
  const from = message.from;
  const replied = repliedMessage(message);
  const author = replied && content.authorOf ? content.authorOf(replied.from?.id) : undefined;
  const forwarded = forwardOrigin(message, content.authorOf);
  return fitUserMessage({
    type: 'user_message',
    inboundId: content.inboundId,
    route: content.route,
    telegramMessageId: message.message_id,
    sender: {
      id: from?.id ?? 0,
      name: [from?.first_name, from?.last_name].filter(Boolean).join(' ').slice(0, 300) || 'unknown',
      ...(from?.username ? { username: from.username } : {}),
    },
    text: content.text,
    attachments: content.attachments,
    ...(replied
      ? {
          replyTo: {
            messageId: replied.message_id,
            ...((replied.text ?? replied.caption) ? { text: replied.text ?? replied.caption ?? '' } : {}),
            ...(author ? { author } : {}),
          },
        }
      : {}),
    ...(forwarded ? { forwardedFrom: forwarded } : {}),
    sentAt: message.date * 1000,
  });
}

/**
 * Who wrote a forwarded message, from Telegram's `forward_origin`. Only a user's origin can be someone
 * on the allowlist (or the bot); a hidden user, a chat or a channel is always a third party.
 */
function forwardOrigin(
  message: MessageShape,
  authorOf: ((userId: number | undefined) => 'bot' | 'allowed' | 'third_party') | undefined,
): { name: string; author: 'bot' | 'allowed' | 'third_party' } | undefined {
  const origin = message.forward_origin;
  if (!origin) return undefined;
  const named = (name: string) => name.slice(0, 300) || 'unknown';
  switch (origin.type) {
    case 'user': {
      const user = origin.sender_user;
      const name = [user.first_name, user.last_name].filter(Boolean).join(' ');
      return {
        name: named(user.username ? `${name} (@${user.username})` : name),
        author: authorOf ? authorOf(user.id) : 'third_party',
      };
    }
    case 'hidden_user':
      return { name: named(origin.sender_user_name), author: 'third_party' };
    case 'chat':
      return { name: named(origin.sender_chat.title ?? 'a chat'), author: 'third_party' };
    case 'channel':
      return { name: named(origin.chat.title ?? 'a channel'), author: 'third_party' };
    default:
      return { name: 'unknown', author: 'third_party' };
  }
}
