/**
 * The send journal: makes every message the gateway sends findable after a `kill -9`, so a reply's
 * messages survive a crash at any point — no stray message with partial text, no doubled reply.
 *
 * The problem: `sendMessage` creates the message on Telegram's side before its id reaches us. A process
 * killed in between (or before the id is written to SQLite) leaves a message nobody knows, and the Bot
 * API cannot list a chat's messages. The design:
 *
 * 1. Intent first. Before the call, a row records the chat, the text and options, who will own the
 *    message (a reply's slot, an inbound message's placeholder, a prompt), and the chat's *floor*: the
 *    newest bot message id known there. The row goes in the transaction that records the new id where
 *    its owner keeps it (`adopt`), so "sent" and "known" can never be split by a crash.
 * 2. One call in flight per chat. Every `sendMessage` of the gateway goes through here, from inside a
 *    courier call, and a courier lane runs one call at a time. So when the process dies, at most one
 *    send per chat is unresolved, and every bot message sent before it has an id at or below its floor
 *    (each resolved send raises the chat's mark in the same transaction). Hence the *first bot message
 *    above the floor* is the unresolved send's message, if it exists at all.
 * 3. Reconcile at boot, before any new traffic (nothing else may send in the meantime, or step 2's
 *    "first" would not hold). For each row left over, ids above the floor are probed with
 *    `editMessageText` carrying the very text and options the message was sent with: a user's or a
 *    service message answers "can't be edited", a missing id "not found", and the bot's own message
 *    "message is not modified" — recognized without being changed. The found message goes to its owner:
 *    a reply adopts it at its slot (the resumed final render then edits it into place or deletes it as
 *    surplus), a placeholder not yet taken into a turn becomes the placeholder; a message that no owner
 *    can use any more (its turn was rendered without it, its inbound message already has a reply) is
 *    deleted. Ids the inbox knows as the user's are skipped without a call; the probe stops at the
 *    first id that does not exist (messages get increasing ids, and the send was the last thing in its
 *    lane) or after {@link MAX_PROBES} calls.
 *
 * 4. An exchange that failed without an answer (a network error: the request may have been carried out,
 *    the connection lost before its answer) is resolved on the spot the same way, still inside the
 *    lane: probed, then adopted if the message exists, sent again only if it provably does not. Such a
 *    send is never retried blindly (`bot-api.ts` leaves `sendMessage`'s network errors to this
 *    module), so a placeholder, a reply chunk, a card or a keyboard can be neither doubled nor silently lost:
 *    a probe that cannot decide leaves the row for the next boot's reconciliation and the send fails
 *    (its owner logs it and goes on without that message).
 *
 * Failure mode left: a message deleted by the user inside the ~ms between the floor and the unresolved
 * send would end the probe early, leaving at most one stray message.
 */
import { type Clock, type Logger, systemClock } from '@switchyard/protocol';
import type { Message } from 'grammy/types';
import type { GatewayStore, SendRow } from '../../store/store.js';
import { answerLost, type BotApi, errorText, isNotModified, isOutcomeUnknown } from './bot-api.js';
import type { Courier } from './courier.js';

/** Who takes a message whose send was left unresolved by a crash. */
export type SendOwner =
  /** A reply's message at index `slot` of its message list (`turns.message_ids`). */
  | { kind: 'reply'; turnId: string; slot: number }
  /** The placeholder of an inbound message, saying `placeholderKind`. */
  | { kind: 'placeholder'; inboundId: string; placeholderKind: string }
  /** A prompt's keyboard message. */
  | { kind: 'prompt'; token: string }
  /** A turn's progress card. */
  | { kind: 'card'; turnId: string };

/** What a reconciliation found: messages adopted by their owners, and strays deleted. */
export interface ReconcileReport {
  pending: number;
  adopted: number;
  deleted: number;
}

/** A journaled send; see the module comment. */
export type JournaledSend = (
  chatId: number,
  text: string,
  other?: Parameters<BotApi['sendMessage']>[2],
  owned?: {
    owner: SendOwner;
    /** Records the new message where its owner keeps it; runs in the transaction that ends the send. */
    adopt(messageId: number): void;
  },
) => Promise<Message.TextMessage>;

/** A journaled rich send: `sendRichMessage` of `markdown`; see {@link SendJournal.sendRich}. */
export type JournaledRichSend = (
  chatId: number,
  markdown: string,
  other?: Parameters<BotApi['sendRichMessage']>[2],
  owned?: { owner: SendOwner; adopt(messageId: number): void },
) => Promise<{ message_id: number }>;

/** The journal's handle. */
export interface SendJournal {
  /** `sendMessage` with the intent recorded first. Call it only from inside a courier call. */
  send: JournaledSend;
  /**
   * `sendRichMessage` under the same discipline as `send` (the row's `other.rich` marks it, and the
   * boot probe edits with the same `rich_message`). One step more: when the call's answer is lost (a
   * network or server error, which `createBot` does not retry for this method), the message may exist;
   * the journal probes for it at once, as the boot reconciliation would, and adopts it instead of
   * sending a second one. Only a probe that finds nothing sends again, once.
   */
  sendRich: JournaledRichSend;
  /** Resolves the sends a previous process left in flight. Run at boot, before any new traffic. */
  reconcile(): Promise<ReconcileReport>;
}

/** Most `editMessageText` probes per unresolved send. */
export const MAX_PROBES = 8;

/** What the journal needs. */
export interface SendJournalOptions {
  api: Pick<BotApi, 'sendMessage' | 'sendRichMessage' | 'editMessageText' | 'deleteMessage'>;
  store: GatewayStore;
  courier: Courier;
  logger: Logger;
  /** Time for the date of a message found after a lost answer; default the system clock. */
  clock?: Clock;
}

/** Most sends of one message whose exchanges failed without an answer (each probed as absent first). */
const MAX_UNKNOWN_ATTEMPTS = 3;

/**
 * `base` with its `sendMessage` journaled (ownerless), for the modules whose messages no one needs to
 * adopt after a crash (command replies, notices): journaling them keeps every chat's floor exact.
 * The view inherits every other method from `base` through the prototype chain.
 */
export function journaledApi(base: BotApi, journal: SendJournal): BotApi {
  const view = Object.create(base) as BotApi;
  view.sendMessage = (chatId, text, other, signal) =>
    typeof chatId === 'number'
      ? journal.send(chatId, text, other)
      : base.sendMessage(chatId, text, other, signal);
  return view;
}

/** Creates the journal over the store. */
export function createSendJournal(options: SendJournalOptions): SendJournal {
  const { api, store, courier, logger } = options;

  const send: JournaledSend = async (chatId, text, other, owned) => {
    for (let attempt = 1; ; attempt++) {
      const sendId = store.beginSend({
        chatId,
        owner: owned?.owner,
        text,
        other: (other ?? {}) as Record<string, unknown>,
      });
      let sent: Message.TextMessage;
      try {
        sent = await api.sendMessage(chatId, text, other);
      } catch (error) {
        if (!isOutcomeUnknown(error)) {
          // Telegram refused it: no message exists.
          store.endSend(sendId, chatId, undefined);
          throw error;
        }
        // Sent or not, nobody knows: look before sending again (we hold the chat's lane).
        const row = store.pendingSends().find((r) => r.sendId === sendId);
        const found = row
          ? await find(row, row.floor, store.inboundMessageIds(chatId), (probe) => probe())
          : 'unknown';
        logger.warn(
          {
            event: 'send_outcome_unknown',
            chat: chatId,
            attempt,
            found: typeof found === 'number' ? 'sent' : found,
          },
          'send-journal',
        );
        if (found === 'unknown') throw error; // the row stays: the next boot's reconciliation resolves it
        if (found === 'absent') {
          store.endSend(sendId, chatId, undefined);
          if (attempt < MAX_UNKNOWN_ATTEMPTS) continue;
          throw error;
        }
        sent = {
          message_id: found,
          date: Math.floor((options.clock ?? systemClock).now() / 1000),
          chat: { id: chatId },
          text,
        } as Message.TextMessage;
      }
      store.atomically(() => {
        owned?.adopt(sent.message_id);
        store.endSend(sendId, chatId, sent.message_id);
      });
      return sent;
    }
  };

  const sendRich: JournaledRichSend = async (chatId, markdown, other, owned) => {
    const record = () =>
      store.beginSend({
        chatId,
        owner: owned?.owner,
        text: markdown,
        other: { ...(other ?? {}), rich: true } as Record<string, unknown>,
      });
    const attempt = async (sendId: number): Promise<{ message_id: number } | 'lost'> => {
      try {
        return await api.sendRichMessage(chatId, { markdown, skip_entity_detection: false }, other);
      } catch (error) {
        if (!answerLost(error)) {
          store.endSend(sendId, chatId, undefined);
          throw error;
        }
        return 'lost';
      }
    };
    const settle = (sendId: number, id: number): { message_id: number } => {
      store.atomically(() => {
        owned?.adopt(id);
        store.endSend(sendId, chatId, id);
      });
      return { message_id: id };
    };
    for (let round = 0; ; round++) {
      const sendId = record();
      const sent = await attempt(sendId);
      if (sent !== 'lost') return settle(sendId, sent.message_id);
      const row = store.pendingSends().find((r) => r.sendId === sendId);
      // Inside the chat's courier call already (see `send`): the probe runs in this lane, not through it.
      const found = row
        ? await find(row, row.floor, store.inboundMessageIds(chatId), (probe) => probe())
        : 'unknown';
      logger.warn(
        { event: 'send_answer_lost', chat: chatId, outcome: typeof found === 'number' ? 'found' : found },
        'send-journal',
      );
      if (typeof found === 'number') return settle(sendId, found);
      // Cannot tell: the row stays for the next boot's reconciliation, and the send fails.
      if (found === 'unknown')
        throw new Error('sendRichMessage: the answer was lost and the chat could not be probed');
      store.endSend(sendId, chatId, undefined);
      if (round >= 1) throw new Error('sendRichMessage: the answer was lost twice and no message was found');
    }
  };

  /**
   * The first bot message above `floor` that carries `row`'s content; `absent` when there is none,
   * `unknown` when a probe failed. `call` runs each probe (through the courier, or directly from inside
   * the chat's lane).
   */
  const find = async (
    row: SendRow,
    floor: number,
    users: Set<number>,
    call: (probe: () => Promise<unknown>) => Promise<unknown>,
  ): Promise<number | 'absent' | 'unknown'> => {
    const o = row.other;
    const content: Parameters<BotApi['editMessageText']>[2] =
      o.rich === true ? { markdown: row.text, skip_entity_detection: false } : row.text;
    const same = {
      ...(o.parse_mode === undefined ? {} : { parse_mode: o.parse_mode }),
      ...(o.entities === undefined ? {} : { entities: o.entities }),
      ...(o.link_preview_options === undefined ? {} : { link_preview_options: o.link_preview_options }),
      ...(o.reply_markup === undefined ? {} : { reply_markup: o.reply_markup }),
    } as Parameters<BotApi['editMessageText']>[3];
    let probes = 0;
    for (let id = floor + 1; probes < MAX_PROBES; id++) {
      if (users.has(id)) continue;
      probes++;
      try {
        await call(() => api.editMessageText(row.chatId, id, content, same));
        return id; // changed: the bot's message, though not byte-identical (found all the same)
      } catch (error) {
        if (isNotModified(error)) return id;
        const why = errorText(error);
        if (/not found/i.test(why)) return 'absent'; // past the newest message
        if (/can't be edited|not enough rights/i.test(why)) continue; // a user's or a service message
        logger.warn({ event: 'send_probe_failed', chat: row.chatId, error: why }, 'cannot probe');
        return 'unknown';
      }
    }
    return 'unknown';
  };

  /** Hands `messageId` to the row's owner; false when no owner can use it (it is then deleted). */
  const adopt = (owner: SendOwner | undefined, messageId: number): boolean | 'nobody' => {
    if (owner === undefined) return 'nobody';
    switch (owner.kind) {
      case 'reply': {
        const turn = store.getTurn(owner.turnId);
        if (!turn || turn.state === 'rendered') return false;
        if (turn.messageIds.includes(messageId)) return true;
        const ids = [...turn.messageIds];
        ids.splice(Math.min(owner.slot, ids.length), 0, messageId);
        store.setTurnMessages(owner.turnId, ids);
        return true;
      }
      case 'placeholder': {
        const row = store.getInbound(owner.inboundId);
        // Taken into a turn already: that turn did not know this placeholder and replied elsewhere.
        if (!row || row.placeholderId !== undefined || row.state === 'taken' || row.state === 'unread')
          return row?.placeholderId === messageId;
        store.setPlaceholder(owner.inboundId, messageId, owner.placeholderKind);
        return true;
      }
      case 'prompt': {
        const prompt = store.getPromptByToken(owner.token);
        if (!prompt) return false;
        if (prompt.messageId === undefined) store.setPromptMessage(owner.token, messageId);
        return true;
      }
      case 'card': {
        // Adopted, the turn's card is taken over at boot (`turns.resume`) and closed as any card is.
        const turn = store.getTurn(owner.turnId);
        if (!turn || (turn.cardMessageId !== undefined && turn.cardMessageId !== messageId)) return false;
        store.setTurnCard(owner.turnId, messageId);
        return true;
      }
    }
  };

  return {
    send,
    sendRich,
    async reconcile() {
      const report: ReconcileReport = { pending: 0, adopted: 0, deleted: 0 };
      /** Per chat, the newest bot message found so far: a later row's message is above it. */
      const found = new Map<number, number>();
      for (const row of store.pendingSends()) {
        report.pending++;
        const floor = Math.max(row.floor, found.get(row.chatId) ?? 0);
        const messageId = await find(row, floor, store.inboundMessageIds(row.chatId), (probe) =>
          courier.call(row.chatId, probe, { priority: 'prompt' }),
        );
        if (typeof messageId !== 'number') {
          store.endSend(row.sendId, row.chatId, undefined);
          logger.info({ event: 'send_reconciled', chat: row.chatId, outcome: 'not-sent' }, 'send-journal');
          continue;
        }
        found.set(row.chatId, messageId);
        const owner = row.owner as SendOwner | undefined;
        const kept = store.atomically(() => {
          const taken = adopt(owner, messageId);
          store.endSend(row.sendId, row.chatId, messageId);
          return taken;
        });
        if (kept === false) {
          await courier
            .call(row.chatId, () => api.deleteMessage(row.chatId, messageId), { priority: 'prompt' })
            .catch((error: unknown) =>
              logger.warn({ event: 'send_stray_delete_failed', chat: row.chatId, error: errorText(error) }),
            );
          report.deleted++;
        } else if (kept === true) report.adopted++;
        logger.info(
          {
            event: 'send_reconciled',
            chat: row.chatId,
            message: messageId,
            owner: owner?.kind,
            outcome: kept === false ? 'deleted' : kept === true ? 'adopted' : 'known',
          },
          'send-journal',
        );
      }
      return report;
    },
  };
}
