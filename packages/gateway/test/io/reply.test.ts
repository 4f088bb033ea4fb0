/**
 * The reply shell over its real neighbours, on a manual clock: the send journal (SQLite in memory) for a
 * lost send answer, and the reply factory for the one fact "the server lacks rich messages".
 */
import { ManualClock, silentLogger } from '@switchyard/protocol';
import { GrammyError, HttpError } from 'grammy';
import { describe, expect, it } from 'vitest';
import { decidePresentation } from '../../src/core/reply/presentation.js';
import { createBudget } from '../../src/core/telegram/send-pacing.js';
import { createReplies } from '../../src/io/reply/replies.js';
import { createCourier } from '../../src/io/telegram/courier.js';
import { createSendJournal } from '../../src/io/telegram/send-journal.js';
import { createServerParts } from '../../src/io/telegram/server-parts.js';
import { openGatewayStore } from '../../src/store/store.js';

describe('the shell over the send journal', () => {
  it('a lost sendRichMessage answer is found by the journal and adopted: one message, its id persisted in the send', async () => {
    const clock = new ManualClock(1_000);
    const store = openGatewayStore(':memory:');
    try {
      store.upsertTurn({ turnId: 't', route: { chatId: 1 }, request: '', startedAt: 0 });
      const chat = new Map<number, string>();
      let next = 1;
      let sends = 0;
      const refuse = (description: string) =>
        new GrammyError('call failed', { ok: false, error_code: 400, description }, 'editMessageText', {});
      const api = {
        sendRichMessage: async (_c: number, rich: { markdown: string }) => {
          sends++;
          chat.set(next++, rich.markdown);
          throw new HttpError('Network request failed', new Error('socket hang up'));
        },
        editMessageText: async (_c: number, id: number, content: { markdown: string }) => {
          if (!chat.has(id)) throw refuse('Bad Request: message to edit not found');
          if (chat.get(id) === content.markdown) throw refuse('Bad Request: message is not modified');
          return true;
        },
        sendMessageDraft: async () => true,
        sendRichMessageDraft: async () => true,
        deleteMessage: async () => true,
        sendMessage: async () => {
          throw new Error('not used');
        },
      };
      const courier = createCourier(createBudget(), clock);
      const journal = createSendJournal({ api: api as never, store, courier, logger: silentLogger });
      const inSend: boolean[] = [];
      const persisting = {
        setTurnMessages: (turnId: string, ids: readonly number[]) => {
          inSend.push(store.pendingSends().length > 0); // the send's row is still open: same transaction
          store.setTurnMessages(turnId, [...ids]);
        },
      };
      const replies = createReplies({
        api: api as never,
        journal,
        courier,
        store: persisting,
        logger: silentLogger,
        clock,
        serverParts: createServerParts(silentLogger),
      });
      const reply = replies.stream({
        turnId: 't',
        route: { chatId: 1 },
        presentation: 'draft',
        messageIds: [],
        opener: 9,
      });
      await reply.finish('An answer whose send loses its reply');
      expect(sends).toBe(1);
      expect(chat.size).toBe(1);
      expect(store.getTurn('t')?.messageIds).toEqual([1]);
      expect(inSend).toEqual([true]);
      expect(reply.messageIds).toEqual([1]);
    } finally {
      store.close();
    }
  });

  it('"method not found" is learnt once per gateway: later replies are classic and nothing tries rich again', async () => {
    const clock = new ManualClock(0);
    const missing = new GrammyError(
      'call failed',
      { ok: false, error_code: 404, description: 'Not Found: method not found' },
      'sendRichMessageDraft',
      {},
    );
    const calls: string[] = [];
    const api = {
      sendRichMessageDraft: async () => {
        calls.push('sendRichMessageDraft');
        throw missing;
      },
      sendMessageDraft: async () => {
        calls.push('sendMessageDraft');
        return true;
      },
      editMessageText: async () => {
        calls.push('editMessageText');
        return true;
      },
      deleteMessage: async () => true,
    };
    let id = 70;
    const journal = {
      send: async (_c: number, _t: string, _o: unknown, owned?: { adopt(id: number): void }) => {
        calls.push('send');
        owned?.adopt(id);
        return { message_id: id++ } as never;
      },
      sendRich: async () => {
        calls.push('sendRich');
        throw missing;
      },
    };
    const warnings: string[] = [];
    const logger = {
      ...silentLogger,
      warn: (fields: { event?: string }) => warnings.push(String(fields.event)),
      child: () => logger,
    } as never;
    const serverParts = createServerParts(logger);
    const replies = createReplies({
      api: api as never,
      journal,
      courier: createCourier(createBudget(), clock),
      store: { setTurnMessages: () => {} },
      logger,
      clock,
      serverParts,
    });
    const route = { chatId: 1 };
    const presented = () =>
      decidePresentation({ route, replies: 'rich', richMissing: serverParts.richMissing() });
    expect(presented()).toBe('draft');
    const first = replies.stream({
      turnId: 'a',
      route,
      presentation: presented(),
      messageIds: [],
      opener: 5,
    });
    first.show(() => 'First **answer**');
    await clock.advanceAsync(0);
    expect(presented()).toBe('classic');
    await clock.advanceAsync(5_000);
    const done = first.finish('First **answer**');
    await clock.advanceAsync(5_000);
    await done;
    const second = replies.stream({ turnId: 'b', route, presentation: presented(), messageIds: [80] });
    second.show(() => 'Second');
    const finished = second.finish('Second');
    await clock.advanceAsync(5_000);
    await finished;
    expect(second.notesInline).toBe(false);
    expect(calls.filter((c) => c.startsWith('sendRich'))).toEqual(['sendRichMessageDraft']);
    expect(warnings.filter((w) => w === 'rich_missing')).toHaveLength(1);
    expect(calls).toContain('send');
  });

  it('a draft whose time comes while the chat’s draft bucket is empty still goes once it refills', async () => {
    const clock = new ManualClock(0);
    const drafts: { at: number; id: number; text: string }[] = [];
    const record = async (id: number, text: string) => {
      drafts.push({ at: clock.now(), id, text });
      return true as const;
    };
    const api = {
      sendMessageDraft: async (_c: number, id: number, text: string) => record(id, text),
      sendRichMessageDraft: async (_c: number, id: number, rich: { markdown: string }) =>
        record(id, rich.markdown),
      editMessageText: async () => true,
      deleteMessage: async () => true,
    };
    const journal = { send: async () => ({}) as never, sendRich: async () => ({}) as never };
    const replies = createReplies({
      api: api as never,
      journal,
      courier: createCourier(createBudget(), clock),
      store: { setTurnMessages: () => {} },
      logger: silentLogger,
      clock,
      serverParts: createServerParts(silentLogger),
    });
    const route = { chatId: 1 };
    const reply = replies.stream({ turnId: 'a', route, presentation: 'draft', messageIds: [], opener: 5 });
    reply.show(() => 'Hello');
    await clock.advanceAsync(19_999); // the refresh is due at 20,000
    // Two other messages' "Thinking…" take the chat's two draft tokens just before.
    expect([replies.thinking(route, 6), replies.thinking(route, 7)]).toEqual([true, true]);
    await clock.advanceAsync(2_000);
    expect(drafts.filter((d) => d.id === 5)).toEqual([
      { at: 0, id: 5, text: 'Hello' },
      { at: 20_599, id: 5, text: 'Hello' },
    ]);
  });
});
