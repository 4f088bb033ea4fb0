/**
 * Who may talk to the agent: an allowlist of Telegram user ids, optionally narrowed to some chats.
 * Everyone else gets one polite refusal (remembered by user id only) and nothing of theirs is kept or
 * forwarded. Button presses are checked the same way.
 */
import type { UpdateShape } from './telegram-shapes.js';

/** The allowlist. */
export interface AccessOptions {
  allowUsers: readonly number[];
  /** When given, only these chats (private chats are the user's id); otherwise any chat. */
  allowChats?: readonly number[];
}

/** The polite refusal, sent once per user. */
export const REFUSAL = 'Sorry, this agent only talks to the people it was set up for.';

/** The user and chat an update comes from, if it has them. */
export function updateOrigin(update: UpdateShape): {
  userId: number | undefined;
  chatId: number | undefined;
} {
  const message = update.message ?? update.edited_message ?? update.callback_query?.message;
  const user = update.message?.from ?? update.edited_message?.from ?? update.callback_query?.from;
  // A draft's stop button is pressed in a private chat, whose id is the user's.
  const stopped = update.stopped_message_generation?.chat.id;
  return { userId: user?.id ?? stopped, chatId: message?.chat.id ?? stopped };
}

/** Creates the check; it is pure over the lists it was given. */
export function createAccess(options: AccessOptions): (update: UpdateShape) => boolean {
  const users = new Set(options.allowUsers);
  const chats = options.allowChats ? new Set(options.allowChats) : undefined;
  return (update) => {
    const { userId, chatId } = updateOrigin(update);
    if (userId === undefined || !users.has(userId)) return false;
    // With a chat list, an update that names no chat (an inline-message press) is not in it.
    if (chats && (chatId === undefined || !chats.has(chatId))) return false;
    return true;
  };
}
