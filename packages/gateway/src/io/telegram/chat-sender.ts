/**
 * Plain messages the gateway itself says in a conversation — a refusal, a command's answer, an alert,
 * a notice — sent through the chat's courier lane and the journaled API, inside the conversation's
 * forum topic. A failed send is logged and never rejects: none of these callers has anything to undo.
 */
import type { Logger, Route } from '@switchyard/protocol';
import type { InlineButton } from '../../core/commands/command-texts.js';
import { threadParams } from '../../core/intake/route.js';
import { type BotApi, errorText } from './bot-api.js';
import type { Courier } from './courier.js';

/** The sender's handle. */
export interface ChatSender {
  /** A message with any other `sendMessage` parameters (parse mode, reply, keyboard). */
  sendWith(route: Route, text: string, other: Record<string, unknown>): Promise<unknown>;
  /** A plain message. */
  reply(route: Route, text: string): Promise<unknown>;
  /** A message with inline buttons. */
  replyWithButtons(route: Route, text: string, buttons: InlineButton[][]): Promise<unknown>;
}

/** Creates the sender over the journaled API and the courier. */
export function createChatSender(options: {
  api: Pick<BotApi, 'sendMessage'>;
  courier: Courier;
  logger: Logger;
}): ChatSender {
  const { api, courier, logger } = options;
  const sendWith = (route: Route, text: string, other: Record<string, unknown>): Promise<unknown> =>
    courier
      .call(route.chatId, () => api.sendMessage(route.chatId, text, { ...threadParams(route), ...other }))
      .catch((error: unknown) => logger.warn({ event: 'reply_failed', error: errorText(error) }));
  return {
    sendWith,
    reply: (route, text) => sendWith(route, text, {}),
    replyWithButtons: (route, text, buttons) =>
      sendWith(route, text, { reply_markup: { inline_keyboard: buttons } }),
  };
}
