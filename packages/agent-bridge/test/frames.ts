/** Frames the bridge's tests send, built one way. */
import type { FrameOf } from '@switchyard/protocol';

let counter = 0;

/** A user's text message from Ann in chat `chatId`, as the gateway would forward it. */
export function userMessage(inboundId: string, text: string, chatId = 42): FrameOf<'user_message'> {
  return {
    type: 'user_message',
    inboundId,
    route: { chatId },
    telegramMessageId: 100 + counter++,
    sender: { id: 7, name: 'Ann', username: 'ann' },
    text,
    attachments: [],
    sentAt: Date.now(),
  };
}
