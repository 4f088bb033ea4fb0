import { afterEach, describe, expect, it } from 'vitest';
import { createTelegramServer, type TelegramServer } from '../src/telegram/index.js';

let server: TelegramServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** A server whose clock the test moves (`clock.now`), and a raw Bot API call against it. */
async function open(clock?: { now: number }) {
  const s = createTelegramServer({ rateLimits: false, ...(clock ? { now: () => clock.now } : {}) });
  server = s;
  const { apiRoot } = await s.start();
  const call = async (method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${apiRoot}/bot${s.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
    });
    return (await res.json()) as { ok: boolean; error_code?: number; result?: unknown };
  };
  return { s, call, chat: s.privateChat().id };
}

const botTexts = (s: TelegramServer, chat: number) =>
  s.messages(chat).flatMap((m) => (m.from === 'bot' ? [m.text] : []));

describe('fault injection', () => {
  it('dropNext carries the call out and then closes the connection without an answer', async () => {
    const { s, call, chat } = await open();
    s.dropNext('sendMessage', { chatId: chat });
    await expect(call('sendMessage', { chat_id: chat, text: 'sent, answer lost' })).rejects.toThrow();
    // The message exists although the client never learnt its id.
    expect(botTexts(s, chat)).toEqual(['sent, answer lost']);
    expect((await call('sendMessage', { chat_id: chat, text: 'next' })).ok).toBe(true);
    expect(botTexts(s, chat)).toEqual(['sent, answer lost', 'next']);
    expect(s.faultsInjected().drop).toBe(1);
    expect(s.calls('sendMessage').map((c) => c.description ?? 'ok')).toEqual(['connection dropped', 'ok']);
  });

  it('dropNext with afterCall false drops the call unperformed, and only in its chat', async () => {
    const { s, call, chat } = await open();
    const other = s.privateChat(s.addUser({ firstName: 'Bob' })).id;
    s.dropNext('sendMessage', { chatId: chat, afterCall: false });
    expect((await call('sendMessage', { chat_id: other, text: 'elsewhere' })).ok).toBe(true);
    await expect(call('sendMessage', { chat_id: chat, text: 'never sent' })).rejects.toThrow();
    expect(botTexts(s, chat)).toEqual([]);
    expect(botTexts(s, other)).toEqual(['elsewhere']);
  });

  it('failFor fails every matching call until the time is up (a 5xx outage)', async () => {
    const clock = { now: 1_000 };
    const { s, call, chat } = await open(clock);
    s.failFor('*', { errorCode: 502, description: 'Bad Gateway' }, 20_000);
    expect(await call('sendMessage', { chat_id: chat, text: 'a' })).toMatchObject({
      ok: false,
      error_code: 502,
    });
    clock.now += 19_999;
    expect(await call('getMe', {})).toMatchObject({ ok: false, error_code: 502 });
    clock.now += 1;
    expect((await call('sendMessage', { chat_id: chat, text: 'b' })).ok).toBe(true);
    expect(botTexts(s, chat)).toEqual(['b']);
    expect(s.faultsInjected().fail).toBe(2);
  });

  it('a counted failure goes before a timed one, and clearFaults ends both', async () => {
    const clock = { now: 0 };
    const { s, call, chat } = await open(clock);
    s.failFor(
      'sendMessage',
      { errorCode: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 },
      60_000,
    );
    s.failNext('sendMessage', { errorCode: 500, description: 'Internal Server Error' });
    expect(await call('sendMessage', { chat_id: chat, text: 'x' })).toMatchObject({ error_code: 500 });
    expect(await call('sendMessage', { chat_id: chat, text: 'x' })).toMatchObject({ error_code: 429 });
    s.clearFaults();
    expect((await call('sendMessage', { chat_id: chat, text: 'x' })).ok).toBe(true);
  });

  it('stallUpdates holds getUpdates, updates included, until the stall ends', async () => {
    const { s, call, chat } = await open();
    s.sendText(chat, 'waiting behind the stall');
    s.stallUpdates(400);
    const started = Date.now();
    const polled = await call('getUpdates', { timeout: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(polled.result).toHaveLength(1);
    expect(s.faultsInjected().stall).toBe(1);
  });
});
