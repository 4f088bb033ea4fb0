import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelegramServer, type SandboxEvent, type TelegramServer } from '../src/telegram/index.js';
import { rawRequest } from './raw-request.js';

let server: TelegramServer;
let root: string;
let port: number;
/** This run's secret, from the URL the server gives. */
let key: string;
let view: Record<string, string>;

beforeEach(async () => {
  server = createTelegramServer({ banner: 'replies come from a scripted model' });
  const address = await server.start();
  root = address.apiRoot;
  port = address.port;
  const url = new URL(address.webUrl ?? '');
  key = url.searchParams.get('k') ?? '';
  expect(`${url.origin}${url.pathname}`).toBe(`${root}/`);
  expect(key).toMatch(/^[A-Za-z0-9_-]{24}$/);
  view = { 'x-sandbox-view': key, 'content-type': 'application/json' };
});

afterEach(async () => {
  await server.stop();
});

/** A GET as a script with the key sends it. */
const get = (path: string) => fetch(`${root}${path}`, { headers: { 'x-sandbox-view': key } });

/** A request with exactly these headers, to this test's server. */
const raw = (path: string, headers: Record<string, string>, method?: string, body?: string) =>
  rawRequest(port, path, headers, method, body);

async function botSend(params: Record<string, unknown>): Promise<{ message_id: number }> {
  const res = await fetch(`${root}/bot${server.token}/sendMessage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return ((await res.json()) as { result: { message_id: number } }).result;
}

/** Reads server-sent events until `count` have arrived (node's fetch has no EventSource in Node 20). */
function readEvents(count: number): Promise<SandboxEvent[]> {
  return new Promise((resolve, reject) => {
    const events: SandboxEvent[] = [];
    const req = request(`${root}/web/api/events`, { headers: { 'x-sandbox-view': key } }, (res) => {
      expect(res.headers['content-type']).toContain('text/event-stream');
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (frame.startsWith('data: ')) events.push(JSON.parse(frame.slice(6)) as SandboxEvent);
        }
        if (events.length >= count) {
          req.destroy();
          resolve(events);
        }
      });
    });
    req.on('error', (err) => {
      if (events.length < count) reject(err);
    });
    req.end();
  });
}

describe('the web chat view', () => {
  it('serves the page and its assets', async () => {
    const page = await fetch(`${root}/?k=${key}`);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('/web/static/app.js');
    for (const asset of ['app.js', 'style.css']) {
      expect((await get(`/web/static/${asset}`)).status).toBe(200);
    }
    expect((await get('/web/static/../telegram-server.ts')).status).toBe(404);
  });

  it('gives the state with a default private chat and the banner', async () => {
    const state = (await (await get('/web/api/state')).json()) as {
      banner: string;
      chats: { chat: { id: number; type: string } }[];
    };
    expect(state.banner).toBe('replies come from a scripted model');
    expect(state.chats.map((c) => c.chat)).toMatchObject([{ id: server.defaultUser.id, type: 'private' }]);
  });

  it('sends text as the user, presses buttons, and streams what happens', async () => {
    const chat = server.privateChat();
    const stream = readEvents(3);
    await new Promise((r) => setTimeout(r, 50));
    const sent = await fetch(`${root}/web/api/send`, {
      method: 'POST',
      headers: view,
      body: JSON.stringify({ chatId: chat.id, text: 'hi from the browser' }),
    });
    expect(sent.status).toBe(200);
    const [update] = server.pendingUpdates();
    expect(update?.message?.text).toBe('hi from the browser');
    const prompt = await botSend({
      chat_id: chat.id,
      text: 'Allow <b>Bash</b>?',
      parse_mode: 'HTML',
      reply_markup: { inline_keyboard: [[{ text: 'Allow', callback_data: 'allow' }]] },
    });
    await fetch(`${root}/bot${server.token}/editMessageText`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: chat.id, message_id: prompt.message_id, text: 'Allowed' }),
    });
    const pressed = await fetch(`${root}/web/api/press`, {
      method: 'POST',
      headers: view,
      body: JSON.stringify({ chatId: chat.id, messageId: prompt.message_id, data: 'allow' }),
    });
    // The edit removed the keyboard, so the view may no longer press it.
    expect(pressed.status).toBe(400);
    const events = await stream;
    expect(events.map((e) => e.type)).toEqual(['message', 'message', 'edit']);
    expect(events[1]).toMatchObject({ type: 'message', message: { html: 'Allow <b>Bash</b>?' } });
  });

  it('presses a button on the current keyboard', async () => {
    const chat = server.privateChat();
    const prompt = await botSend({
      chat_id: chat.id,
      text: 'Deny?',
      reply_markup: { inline_keyboard: [[{ text: 'Deny', callback_data: 'deny:7' }]] },
    });
    const res = await fetch(`${root}/web/api/press`, {
      method: 'POST',
      headers: view,
      body: JSON.stringify({ chatId: chat.id, messageId: prompt.message_id, data: 'deny:7' }),
    });
    const query = (await res.json()) as { id: string };
    expect(server.callbackQuery(query.id)).toMatchObject({ data: 'deny:7', messageId: prompt.message_id });
    expect(server.pendingUpdates().at(-1)?.callback_query?.data).toBe('deny:7');
  });

  it('uploads a file as the user', async () => {
    const chat = server.privateChat();
    const form = new FormData();
    form.set('chatId', String(chat.id));
    form.set('caption', 'see attached');
    form.set('file', new Blob(['col1,col2'], { type: 'text/csv' }), 'data.csv');
    const res = await fetch(`${root}/web/api/upload`, {
      method: 'POST',
      headers: { 'x-sandbox-view': key },
      body: form,
    });
    expect(res.status).toBe(200);
    const [message] = server.messages(chat.id);
    expect(message).toMatchObject({ kind: 'document', text: 'see attached', file: { fileName: 'data.csv' } });
    const file = await get(`/web/api/file/${encodeURIComponent(message?.file?.fileId ?? '')}`);
    expect(await file.text()).toBe('col1,col2');
  });

  it("refuses a message over Telegram's 4,096 characters, as its clients never send one (issue 31)", async () => {
    const chat = server.privateChat();
    const res = await fetch(`${root}/web/api/send`, {
      method: 'POST',
      headers: view,
      body: JSON.stringify({ chatId: chat.id, text: 'x'.repeat(10_000) }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/at most 4096 characters.*10000/);
    expect(server.messages(chat.id)).toEqual([]);
  });

  it('refuses POSTs without the view header (no cross-site posting)', async () => {
    const chat = server.privateChat();
    const res = await fetch(`${root}/web/api/send`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ chatId: chat.id, text: 'x' }),
    });
    expect(res.status).toBe(403);
    expect(server.messages(chat.id)).toEqual([]);
  });

  it('refuses a foreign Host: a page whose name was rebound to 127.0.0.1 cannot drive the view', async () => {
    const chat = server.privateChat();
    const state = await raw('/web/api/state', { host: `evil.example:${port}`, 'x-sandbox-view': key });
    expect(state.status).toBe(403);
    expect(JSON.parse(state.body).error).toContain(`http://127.0.0.1:${port}/`);
    const send = await raw(
      '/web/api/send',
      { host: `evil.example:${port}`, 'x-sandbox-view': key, 'content-type': 'application/json' },
      'POST',
      JSON.stringify({ chatId: chat.id, text: 'rm -rf ~' }),
    );
    expect(send.status).toBe(403);
    // Its own port only: the same loopback name on another port is another origin.
    expect(
      (await raw('/web/api/state', { host: `127.0.0.1:${port + 1}`, 'x-sandbox-view': key })).status,
    ).toBe(403);
    expect(server.messages(chat.id)).toEqual([]);
  });

  it('refuses a foreign Origin, even with the key', async () => {
    const chat = server.privateChat();
    const send = await raw(
      '/web/api/send',
      {
        host: `127.0.0.1:${port}`,
        origin: 'http://evil.example',
        'x-sandbox-view': key,
        'content-type': 'application/json',
      },
      'POST',
      JSON.stringify({ chatId: chat.id, text: 'x' }),
    );
    expect(send.status).toBe(403);
    expect(JSON.parse(send.body).error).toContain('evil.example');
    expect(server.messages(chat.id)).toEqual([]);
  });

  it('refuses the page and the API without the run key, or with a wrong one', async () => {
    const here = { host: `127.0.0.1:${port}` };
    expect((await raw('/', here)).status).toBe(403);
    expect((await raw('/?k=wrong', here)).status).toBe(403);
    // One character off (the key is random: a key ending in "x" made "…x" the key itself, 1 run in 62).
    const offByOne = `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`;
    expect((await raw(`/?k=${offByOne}`, here)).status).toBe(403);
    expect((await raw('/web/api/state', here)).status).toBe(403);
    expect((await raw('/web/api/state', { ...here, 'x-sandbox-view': '1' })).status).toBe(403);
    expect(JSON.parse((await raw('/web/api/state', here)).body).error).toContain('?k=');
    expect((await raw('/web/api/state', { ...here, cookie: `sandbox_view_${port}=wrong` })).status).toBe(403);
    // The Bot API keeps its own guard, the token, and knows nothing of the key.
    expect((await fetch(`${root}/bot${server.token}/getMe`)).status).toBe(200);
  });

  it('works from 127.0.0.1 and localhost: the key in the URL, then the cookie the page set', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const page = await raw(`/?k=${key}`, { host });
      expect(page.status).toBe(200);
      const cookie = String((page.headers['set-cookie'] as string[] | undefined)?.[0] ?? '');
      expect(cookie).toMatch(new RegExp(`^sandbox_view_${port}=${key};`));
      expect(cookie).toContain('HttpOnly');
      expect(cookie).toContain('SameSite=Strict');
      const pair = cookie.split(';')[0] ?? '';
      // What the page's scripts send: same origin, the cookie, the view header.
      const origin = `http://${host}`;
      expect((await raw('/web/api/state', { host, origin, cookie: pair })).status).toBe(200);
      const sent = await raw(
        '/web/api/send',
        { host, origin, cookie: pair, 'x-sandbox-view': '1', 'content-type': 'application/json' },
        'POST',
        JSON.stringify({ chatId: server.defaultUser.id, text: `from ${host}` }),
      );
      expect(sent.status).toBe(200);
    }
    expect(server.messages(server.defaultUser.id).map((m) => m.text)).toEqual([
      `from 127.0.0.1:${port}`,
      `from localhost:${port}`,
    ]);
  });

  it('creates a forum from the view with only its General topic, as Telegram does, and topics on request', async () => {
    const res = await fetch(`${root}/web/api/chats`, {
      method: 'POST',
      headers: view,
      body: JSON.stringify({ kind: 'forum', title: 'Team' }),
    });
    const chat = (await res.json()) as { id: number; isForum: boolean; topics: { name: string }[] };
    expect(chat).toMatchObject({ isForum: true, topics: [] });
    expect(server.messages(chat.id)).toEqual([]);
    const topic = await fetch(`${root}/web/api/topics`, {
      method: 'POST',
      headers: view,
      body: JSON.stringify({ chatId: chat.id, name: 'work' }),
    });
    expect(await topic.json()).toMatchObject({ name: 'work' });
    expect(server.chat(chat.id).chat.topics.map((t) => t.name)).toEqual(['work']);
  });

  it('ends open event streams on stop()', async () => {
    const ended = new Promise<void>((resolve) => {
      request(`${root}/web/api/events`, { headers: { 'x-sandbox-view': key } }, (res) => {
        res.resume();
        res.on('end', resolve);
        res.on('close', resolve);
      }).end();
    });
    await new Promise((r) => setTimeout(r, 50));
    await server.stop();
    await ended;
  });
});
