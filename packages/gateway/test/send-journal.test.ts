/**
 * The send journal's boot reconciliation against a fake chat: a send left in flight by a crash is found
 * above its floor by a same-content edit ("not modified"), skipping the user's messages, and handed to
 * its owner — or deleted when its owner can no longer use it, or dropped when it was never sent.
 */
import { silentLogger } from '@switchyard/protocol';
import { GrammyError, HttpError } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { createBudget } from '../src/core/telegram/send-pacing.js';
import { createCourier } from '../src/io/telegram/courier.js';
import { createSendJournal } from '../src/io/telegram/send-journal.js';
import { type GatewayStore, openGatewayStore } from '../src/store/store.js';

let store: GatewayStore | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
});

const fail = (description: string) =>
  new GrammyError('call failed', { ok: false, error_code: 400, description }, 'editMessageText', {});

/** A chat whose messages are `id → { bot, text }`; edits behave as Telegram's do. */
function fakeChat(messages: Map<number, { bot: boolean; text: string }>) {
  const probes: number[] = [];
  const deleted: number[] = [];
  const api = {
    sendMessage: async () => {
      throw new Error('not used');
    },
    editMessageText: async (_chat: number, id: number, text: string) => {
      probes.push(id);
      const m = messages.get(id);
      if (!m) throw fail('Bad Request: message to edit not found');
      if (!m.bot) throw fail("Bad Request: message can't be edited");
      if (m.text === text) throw fail('Bad Request: message is not modified');
      m.text = text;
      return true;
    },
    deleteMessage: async (_chat: number, id: number) => {
      deleted.push(id);
      messages.delete(id);
      return true as const;
    },
  };
  return { api, probes, deleted };
}

function journalOver(
  api: Omit<ReturnType<typeof fakeChat>['api'], 'sendMessage'> & { sendMessage: unknown },
) {
  const s = openGatewayStore(':memory:');
  store = s;
  const courier = createCourier(createBudget({ globalPerSecond: 1000, scale: 0.001 }));
  return { s, journal: createSendJournal({ api: api as never, store: s, courier, logger: silentLogger }) };
}

describe('send journal reconciliation', () => {
  it('adopts a reply message sent before the crash at its slot, skipping the user’s messages', async () => {
    const chat = new Map([
      [10, { bot: true, text: 'part one' }],
      [11, { bot: false, text: 'a user message' }],
      [12, { bot: true, text: 'part two, half' }],
    ]);
    const { api, probes } = fakeChat(chat);
    const { s, journal } = journalOver(api);
    s.upsertTurn({ turnId: 't', route: { chatId: 1 }, request: '', startedAt: 0 });
    s.setTurnMessages('t', [10]);
    s.endSend(s.beginSend({ chatId: 1, owner: undefined, text: 'x', other: {} }), 1, 10);
    s.addInbound({
      inboundId: 'tg:1:11',
      frame: {
        type: 'user_message',
        inboundId: 'tg:1:11',
        route: { chatId: 1 },
        telegramMessageId: 11,
        sender: { id: 1, name: 'u' },
        text: 'a user message',
        attachments: [],
        sentAt: 0,
      },
    });
    // The crash: this send left, and its answer never came back.
    s.beginSend({
      chatId: 1,
      owner: { kind: 'reply', turnId: 't', slot: 1 },
      text: 'part two, half',
      other: {},
    });
    const report = await journal.reconcile();
    expect(report).toEqual({ pending: 1, adopted: 1, deleted: 0 });
    expect(probes).toEqual([12]); // 11 is the user's: skipped without a call
    expect(s.getTurn('t')?.messageIds).toEqual([10, 12]);
    expect(chat.get(12)?.text).toBe('part two, half'); // recognized, not changed
    expect(s.pendingSends()).toHaveLength(0);
  });

  it('deletes a found message no owner can use, and drops a send that never reached Telegram', async () => {
    const chat = new Map([[5, { bot: true, text: 'stale' }]]);
    const { api, deleted, probes } = fakeChat(chat);
    const { s, journal } = journalOver(api);
    s.upsertTurn({ turnId: 'done', route: { chatId: 1 }, request: '', startedAt: 0 });
    s.endTurn('done', 'success', undefined);
    s.markTurnRendered('done');
    s.endSend(s.beginSend({ chatId: 1, owner: undefined, text: 'x', other: {} }), 1, 4);
    s.beginSend({ chatId: 1, owner: { kind: 'reply', turnId: 'done', slot: 0 }, text: 'stale', other: {} });
    s.beginSend({ chatId: 2, owner: undefined, text: 'never sent', other: {} });
    const report = await journal.reconcile();
    expect(report).toEqual({ pending: 2, adopted: 0, deleted: 1 });
    expect(deleted).toEqual([5]);
    // Chat 1: found right above its floor (4). Chat 2: nothing above its floor, so it was never sent.
    expect(probes).toEqual([5, 1]);
    expect(s.pendingSends()).toHaveLength(0);
  });

  it('a send whose answer was lost is found and adopted, never sent twice; one that never arrived is sent again', async () => {
    const chat = new Map([[1, { bot: false, text: 'hello' }]]);
    const { api, probes } = fakeChat(chat);
    /** Per call: 'lost' creates the message and loses the answer, 'refused' creates nothing, both fail. */
    const plan: ('lost' | 'refused' | 'ok')[] = ['lost', 'refused', 'ok'];
    let sends = 0;
    const sendingApi = {
      ...api,
      sendMessage: async (_chat: number, text: string) => {
        sends++;
        const outcome = plan.shift() ?? 'ok';
        if (outcome !== 'refused') chat.set(chat.size + 1, { bot: true, text });
        if (outcome !== 'ok') throw new HttpError('Network request failed', new Error('socket hang up'));
        return { message_id: chat.size, text };
      },
    };
    const { s, journal } = journalOver(sendingApi);
    const adopted: number[] = [];
    const first = await journal.send(
      1,
      'placeholder',
      {},
      {
        owner: { kind: 'prompt', token: 'unused' },
        adopt: (id) => adopted.push(id),
      },
    );
    // Carried out, answer lost: probed (1 is the user's, 2 is ours: "not modified"), adopted, not resent.
    expect(first.message_id).toBe(2);
    expect(sends).toBe(1);
    expect(probes).toEqual([1, 2]);
    const second = await journal.send(
      1,
      'reply chunk',
      {},
      { owner: { kind: 'prompt', token: 'x' }, adopt: (id) => adopted.push(id) },
    );
    // Never arrived: the probe finds nothing above the floor (2), so it is sent again, once.
    expect(probes).toEqual([1, 2, 3]);
    expect(sends).toBe(3);
    expect(second.message_id).toBe(3);
    expect(adopted).toEqual([2, 3]);
    expect([...chat.values()].filter((m) => m.bot).map((m) => m.text)).toEqual([
      'placeholder',
      'reply chunk',
    ]);
    expect(s.pendingSends()).toHaveLength(0);
  });
});
