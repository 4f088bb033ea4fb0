/**
 * The shell of `core/telegram/newer-api.ts`: what this run has learnt of the server's newer Bot API parts
 * (kept in memory — a restart tries them again, which costs one refused call each) and whether it has rich
 * messages at all (a "method not found" from the reply shell, `io/reply/reply.ts`), and the operations that
 * use them outside the reply machine: a message for one member of a chat (a stranger's refusal in a
 * group, the answers to `/help` and `/status`), and a `/sessions` button spent in place — gathered for
 * the gateway's wiring by {@link createNewerParts}. The draft's `keep_on_stop` is used by the reply shell
 * (`io/reply/reply.ts`) through {@link ServerPartsState.draftStop}.
 */
import type { Logger, Route } from '@switchyard/protocol';
import type { CallbackQuery, InlineKeyboardMarkup, Message } from 'grammy/types';
import { addressedToBot, type BotIdentity, isGroupChat } from '../../core/intake/addressing.js';
import { routeOfMessage, threadParams } from '../../core/intake/route.js';
import {
  draftStopParams,
  type KeyboardButton,
  learnPart,
  type NewerPart,
  oneMemberNotice,
  type PartFollowUp,
  type ServerParts,
  sentEphemerally,
  spendButton,
  UNTRIED,
} from '../../core/telegram/newer-api.js';
import { SESSION_BUTTON_EXPIRED } from '../commands/session-buttons.js';
import { type BotApi, errorCode, errorText } from './bot-api.js';
import type { Courier } from './courier.js';

/** What the run knows of the server's newer parts, and how a call that used one reports back. */
export interface ServerPartsState {
  current(): ServerParts;
  /**
   * Whether the server answered "method not found" for rich messages (learnt once per run, by the reply
   * shell): the presentation decided for the next messages reads it (classic from then on).
   */
  richMissing(): boolean;
  /** A rich message's call found no such method: the server lacks rich messages for the rest of the run. */
  noteRichMissing(): void;
  /** The stop parameters for a draft (`can_stop`, and `keep_on_stop` unless the server lacks it). */
  draftStop(): { can_stop: true; keep_on_stop?: true };
  /** Reports a call that used `part` (`error`: what it threw); returns the caller's follow-up. */
  report(part: NewerPart, outcome: 'ok' | 'ignored' | { error: unknown }): PartFollowUp;
}

/** Creates the run's knowledge: every part untried. */
export function createServerParts(logger: Logger): ServerPartsState {
  let parts = UNTRIED;
  let richMissing = false;
  return {
    current: () => parts,
    richMissing: () => richMissing,
    noteRichMissing() {
      if (!richMissing)
        logger.warn(
          { event: 'rich_missing' },
          'the Bot API server lacks rich messages (method not found): classic replies from now on',
        );
      richMissing = true;
    },
    draftStop: () => draftStopParams(parts),
    report(part, outcome) {
      const learnt = learnPart(
        parts,
        part,
        outcome === 'ok' || outcome === 'ignored'
          ? { kind: outcome }
          : { kind: 'refused', code: errorCode(outcome.error) ?? 0, description: errorText(outcome.error) },
      );
      if (learnt.parts[part] === 'no' && parts[part] !== 'no')
        logger.warn(
          { event: 'bot_api_part_missing', part },
          'the Bot API server lacks this part; using the old way for the rest of this run',
        );
      parts = learnt.parts;
      return learnt.followUp;
    },
  };
}

/** Who a message for one member is for. */
export interface OneMember {
  chatType: 'private' | 'group' | 'supergroup' | 'channel';
  userId: number | undefined;
  callbackQueryId?: string | undefined;
}

/**
 * Sends `text` to `route` for one member; `fallback` is the old way (see `oneMemberNotice`). `once`, when
 * given, is asked just before anything is said (not when nothing will be): false says nothing.
 */
export type OneMemberSender = (
  route: Route,
  member: OneMember,
  text: string,
  fallback: 'public' | 'silent',
  once?: () => boolean,
) => Promise<void>;

/**
 * Creates the sender of messages for one member. Ephemeral messages go through the raw API (they have no
 * message id to journal); the ordinary ones through `sendPublic`, the gateway's usual reply. Never rejects.
 */
export function createOneMemberSender(options: {
  api: Pick<BotApi, 'sendMessage' | 'deleteMessage'>;
  courier: Courier;
  parts: ServerPartsState;
  sendPublic(route: Route, text: string): Promise<unknown>;
  logger: Logger;
}): OneMemberSender {
  const { api, courier, parts, logger } = options;
  const send = async (
    route: Route,
    member: OneMember,
    text: string,
    fallback: 'public' | 'silent',
    once?: () => boolean,
  ): Promise<void> => {
    const notice = oneMemberNotice(
      parts.current(),
      { chatType: member.chatType, receiverId: member.userId, callbackQueryId: member.callbackQueryId },
      fallback,
    );
    if (notice.kind === 'silent' || (once && !once())) return;
    if (notice.kind === 'public') {
      await options.sendPublic(route, text);
      return;
    }
    let said = false;
    try {
      const sent = await courier.call(route.chatId, () =>
        api.sendMessage(route.chatId, text, {
          ...threadParams(route),
          ephemeral_message_parameters: notice.parameters,
        }),
      );
      if (!sent) return; // dropped unrun: the gateway is stopping
      said = sentEphemerally(sent, notice.parameters.receiver_user_id);
      // Meant for one member, seen by all: taken back at once.
      if (parts.report('ephemeral', said ? 'ok' : 'ignored') === 'undo_then_old_way' && sent.message_id !== 0)
        await courier
          .call(route.chatId, () => api.deleteMessage(route.chatId, sent.message_id))
          .catch(() => {});
    } catch (error) {
      if (parts.report('ephemeral', { error }) === 'none')
        logger.warn(
          { event: 'ephemeral_failed', chat: route.chatId, error: errorText(error) },
          'the old way',
        );
    }
    // Not said to them alone: the old way, this once (and from now on, if the server lacks the part).
    if (!said && fallback === 'public') await options.sendPublic(route, text);
  };
  return (route, member, text, fallback, once) =>
    send(route, member, text, fallback, once).catch((error: unknown) =>
      logger.warn({ event: 'reply_failed', error: errorText(error) }),
    );
}

/**
 * Turns the pressed `/sessions` button into a disabled one in place (`spendButton`); on a server without
 * disabled buttons the keyboard stays as it was. Best effort: never rejects.
 */
export async function spendPressedButton(options: {
  api: Pick<BotApi, 'editMessageReplyMarkup'>;
  courier: Courier;
  parts: ServerPartsState;
  query: Pick<CallbackQuery, 'data' | 'message'>;
  logger: Logger;
}): Promise<void> {
  const { api, courier, parts, query } = options;
  const message = query.message;
  const keyboard = message?.reply_markup?.inline_keyboard as KeyboardButton[][] | undefined;
  if (!message || !keyboard || query.data === undefined) return;
  const spent = spendButton(parts.current(), keyboard, query.data);
  if (!spent) return;
  try {
    await courier.call(message.chat.id, () =>
      api.editMessageReplyMarkup(message.chat.id, message.message_id, {
        reply_markup: { inline_keyboard: spent as InlineKeyboardMarkup['inline_keyboard'] },
      }),
    );
    parts.report('disabled_buttons', 'ok');
  } catch (error) {
    if (parts.report('disabled_buttons', { error }) === 'none')
      options.logger.warn({ event: 'button_spend_failed', error: errorText(error) }, 'button left as it was');
  }
}

/** The newer parts as the gateway's wiring uses them: the run's knowledge and the operations over it. */
export interface NewerParts {
  readonly state: ServerPartsState;
  readonly tellOne: OneMemberSender;
  /** The commands' `reply`: for member `to` alone where given (ephemeral in a group), else to the chat. */
  reply(route: Route, text: string, to?: number): void;
  /**
   * A stranger's message (`from` set): in a group, when it is addressed to the bot, `text` is said to them
   * alone (ephemeral) if `once()` allows; otherwise, and where the server lacks ephemeral messages, nothing.
   */
  refuseInGroup(message: Message, me: BotIdentity, text: string, once: () => boolean): void;
  /** A `/sessions` press told `answer`: unless it expired, its button is spent in place. */
  spendButton(query: Pick<CallbackQuery, 'data' | 'message'>, answer: string | undefined): Promise<void>;
}

/** Creates the run's newer parts over the bot's raw API; `sendPublic` is the gateway's usual reply. */
export function createNewerParts(options: {
  api: Pick<BotApi, 'sendMessage' | 'deleteMessage' | 'editMessageReplyMarkup'>;
  courier: Courier;
  sendPublic(route: Route, text: string): Promise<unknown>;
  logger: Logger;
}): NewerParts {
  const { api, courier, logger } = options;
  const state = createServerParts(logger);
  const tellOne = createOneMemberSender({
    api,
    courier,
    parts: state,
    sendPublic: options.sendPublic,
    logger,
  });
  return {
    state,
    tellOne,
    reply(route, text, to) {
      // A route's chat id is positive for a private chat, negative for a group (Telegram's ids).
      const chatType = route.chatId > 0 ? 'private' : 'group';
      if (to === undefined) void options.sendPublic(route, text);
      else void tellOne(route, { chatType, userId: to }, text, 'public');
    },
    refuseInGroup(message, me, text, once) {
      if (!isGroupChat(message) || !addressedToBot(message, me) || !message.from) return;
      const member = { chatType: message.chat.type, userId: message.from.id };
      void tellOne(routeOfMessage(message), member, text, 'silent', once);
    },
    spendButton: (query, answer) =>
      answer === SESSION_BUTTON_EXPIRED
        ? Promise.resolve()
        : spendPressedButton({ api, courier, parts: state, query, logger }),
  };
}
