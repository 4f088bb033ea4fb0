/**
 * Who a group message is for. In private chats every message is the bot's; in groups and forums the bot
 * reads only what is addressed to it — a mention of its @username, a reply to one of its messages, or a
 * command of this bot (text that merely starts with `/`, such as a path, is not one) — unless the chat
 * is set to `listen: all`. Unaddressed messages are not stored and never reach the model. Pure functions
 * over Telegram's message shape, so each rule is unit-tested.
 */
import { COMMANDS } from '../commands/commands.js';
import type { MessageShape } from './telegram-shapes.js';

/** The bot as the rules need it. */
export interface BotIdentity {
  id: number;
  username: string;
}

/** Whether the message comes from a group or a supergroup (forums are supergroups). */
export function isGroupChat(message: MessageShape): boolean {
  return message.chat.type === 'group' || message.chat.type === 'supergroup';
}

/**
 * The message this one really replies to. In a forum every topic message carries `reply_to_message`
 * pointing at the topic's first (service) message; that is not a reply anyone wrote.
 */
export function repliedMessage(message: MessageShape): MessageShape | undefined {
  const replied = message.reply_to_message;
  if (!replied) return undefined;
  if (message.is_topic_message && replied.message_id === message.message_thread_id) return undefined;
  return replied;
}

/** Whether the text mentions the bot (`@username`, as Telegram's `mention` entity or plain text). */
export function mentionsBot(message: MessageShape, bot: BotIdentity): boolean {
  const text = message.text ?? message.caption ?? '';
  const entities = message.entities ?? message.caption_entities ?? [];
  const handle = `@${bot.username}`.toLowerCase();
  for (const entity of entities) {
    if (entity.type === 'mention') {
      if (text.slice(entity.offset, entity.offset + entity.length).toLowerCase() === handle) return true;
    }
    if (entity.type === 'text_mention' && entity.user?.id === bot.id) return true;
  }
  return mentionPattern(bot.username).test(text);
}

/** Command names of this bot: its menu, and `/start`, which Telegram sends on a user's first visit. */
const COMMAND_NAMES: ReadonlySet<string> = new Set(['start', ...COMMANDS.map((c) => c.command)]);

/**
 * Whether the text is a command of this bot: `/name@its_username` (any name: the reply says which
 * exist), or `/name` alone for a name of its own command table. `/tmp/x is broken`, `/ban@other_bot`
 * and another bot's `/ban` are not.
 */
export function isCommandOfBot(text: string, bot: BotIdentity): boolean {
  const match = /^\/([a-zA-Z0-9_]+)(?:@([a-zA-Z0-9_]+))?(?:\s|$)/.exec(text.trim());
  if (!match) return false;
  const [, name = '', target] = match;
  if (target !== undefined) return target.toLowerCase() === bot.username.toLowerCase();
  return COMMAND_NAMES.has(name.toLowerCase());
}

/** Whether a group message is addressed to the bot: a mention, a reply to the bot, or a command of it. */
export function addressedToBot(message: MessageShape, bot: BotIdentity): boolean {
  if (message.text !== undefined && isCommandOfBot(message.text, bot)) return true;
  if (repliedMessage(message)?.from?.id === bot.id) return true;
  return mentionsBot(message, bot);
}

/** The text without the bot's mention (and the space it leaves), for the model to read. */
export function stripMention(text: string, username: string): string {
  return text
    .replace(mentionPattern(username, 'g'), '$1')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

function mentionPattern(username: string, flags = ''): RegExp {
  const escaped = username.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_])@${escaped}(?![A-Za-z0-9_])`, `i${flags}`);
}
