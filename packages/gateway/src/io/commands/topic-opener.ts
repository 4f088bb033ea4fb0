/**
 * The shell of `/new` in a private chat with topics (`core/commands/topics.ts`): opens the topic with
 * `createForumTopic`, greets in it and says so where `/new` was sent. The conversation `/new` was sent
 * in is left alone — no frame goes to the bridge; the new topic's session starts with its first message.
 */
import { type Clock, type Logger, type Route, systemClock } from '@switchyard/protocol';
import { newConversation, TOPIC_TEXTS } from '../../core/commands/topics.js';
import { type BotApi, errorText } from '../telegram/bot-api.js';

/** What the opener needs. */
export interface TopicOpenerOptions {
  /** The bot: its API, and whether it has topics in private chats (`getMe`'s `has_topics_enabled`). */
  bot: {
    api: Pick<BotApi, 'createForumTopic'>;
    isInited(): boolean;
    botInfo: { has_topics_enabled?: boolean };
  };
  /** Queues a plain message in a conversation; never rejects. */
  reply(route: Route, text: string): unknown;
  logger: Logger;
  /** Time for the topic's name; default the system clock. */
  clock?: Clock;
}

/** `/new`'s topic half. */
export interface TopicOpener {
  /**
   * Opens a new topic for `/new` sent in `route` and returns it; `'clear'` when `/new` is `/clear` here
   * (no topics, or Telegram refused the topic: the chat was told and the caller clears in place).
   */
  open(route: Route): Promise<Route | 'clear'>;
}

/** Creates the opener. */
export function createTopicOpener(options: TopicOpenerOptions): TopicOpener {
  const { bot, reply, logger } = options;
  const clock = options.clock ?? systemClock;
  const topicsEnabled = (): boolean => bot.isInited() && bot.botInfo.has_topics_enabled === true;
  return {
    async open(route) {
      const plan = newConversation(route, topicsEnabled(), new Date(clock.now()).toISOString());
      if (plan.kind === 'clear') return 'clear';
      try {
        const topic = await bot.api.createForumTopic(route.chatId, plan.name);
        const opened: Route = { chatId: route.chatId, threadId: topic.message_thread_id };
        reply(opened, TOPIC_TEXTS.welcome);
        reply(route, TOPIC_TEXTS.opened(topic.name));
        logger.info({ event: 'topic_opened', chat: route.chatId, thread: topic.message_thread_id });
        return opened;
      } catch (error) {
        logger.warn({ event: 'topic_failed', chat: route.chatId, error: errorText(error) });
        reply(route, TOPIC_TEXTS.refused(errorText(error)));
        return 'clear';
      }
    },
  };
}
