/**
 * Who may reach the sandbox's Bot API routes (`/bot<token>/<method>`, `/file/bot<token>/<path>`). They
 * answered any Host and any Origin, with a fixed public token on a fixed port: a page whose name was
 * rebound to 127.0.0.1, or any page posting to 127.0.0.1, read the developer's chats with `getUpdates`
 * and wrote into them as the bot (issue 27). Now they answer only this machine's loopback names on the
 * sandbox's own port, no page but the sandbox's own, and a token that is new for every server.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelegramServer, type TelegramServer } from '../src/telegram/index.js';
import { rawRequest } from './raw-request.js';

let server: TelegramServer;
let port: number;

beforeEach(async () => {
  server = createTelegramServer();
  ({ port } = await server.start());
});

afterEach(async () => {
  await server.stop();
});

/** A request with exactly these headers, to this test's server. */
const raw = (path: string, headers: Record<string, string>, method?: string, body?: string) =>
  rawRequest(port, path, headers, method, body);

/** A file the bot can download: a document the user sent, and its path under `/file/bot<token>/`. */
async function sentFilePath(): Promise<string> {
  const chat = server.privateChat();
  const sent = server.sendDocument(chat.id, {
    data: Buffer.from('the developer’s notes'),
    fileName: 'notes.txt',
  });
  const fileId = sent.file?.fileId ?? '';
  const res = await fetch(`http://127.0.0.1:${port}/bot${server.token}/getFile`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ file_id: fileId }),
  });
  return ((await res.json()) as { result: { file_path: string } }).result.file_path;
}

describe("the sandbox's Bot API routes", () => {
  it('refuse a rebinding request (Host: evil.example) to /bot<token>/getUpdates', async () => {
    server.sendText(server.privateChat().id, 'a private message');
    const here = { host: `127.0.0.1:${port}` };
    // The same request to the sandbox's own name is answered: the refusal is the Host's doing.
    const own = await raw(`/bot${server.token}/getUpdates`, here);
    expect(own.status).toBe(200);
    expect(own.body).toContain('a private message');

    const rebound = await raw(`/bot${server.token}/getUpdates`, { host: `evil.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain('a private message');
    expect(JSON.parse(rebound.body)).toMatchObject({ ok: false, error_code: 403 });
    expect(JSON.parse(rebound.body).description).toContain('evil.example');
    // Its own port only: the same loopback name on another port is another origin.
    expect((await raw(`/bot${server.token}/getMe`, { host: `127.0.0.1:${port + 1}` })).status).toBe(403);
  });

  it('refuse a foreign Origin on every route: methods, getUpdates and /file/…', async () => {
    const path = await sentFilePath();
    const foreign = { host: `127.0.0.1:${port}`, origin: 'http://evil.example' };
    const send = await raw(
      `/bot${server.token}/sendMessage`,
      { ...foreign, 'content-type': 'text/plain' },
      'POST',
      JSON.stringify({ chat_id: server.defaultUser.id, text: 'as the bot' }),
    );
    expect(send.status).toBe(403);
    expect(JSON.parse(send.body).description).toContain('http://evil.example');
    expect(server.messages(server.defaultUser.id).some((m) => m.text === 'as the bot')).toBe(false);
    expect((await raw(`/bot${server.token}/getUpdates`, foreign)).status).toBe(403);
    const file = await raw(`/file/bot${server.token}/${path}`, foreign);
    expect(file.status).toBe(403);
    expect(file.body).not.toContain('notes');
    // A sandboxed frame or a file:// page says "null"; that is not the sandbox's page either.
    expect((await raw(`/bot${server.token}/getMe`, { ...foreign, origin: 'null' })).status).toBe(403);
    // Without an Origin (a program), and from the sandbox's own page, the file is served.
    expect((await raw(`/file/bot${server.token}/${path}`, { host: foreign.host })).body).toBe(
      'the developer’s notes',
    );
    const page = { host: `localhost:${port}`, origin: `http://localhost:${port}` };
    expect((await raw(`/bot${server.token}/getMe`, page)).status).toBe(200);
  });

  it('refuse a page before the token is looked at, so a guess learns nothing', async () => {
    const foreign = { host: `127.0.0.1:${port}`, origin: 'http://evil.example' };
    expect((await raw('/bot123456789:guess/getMe', foreign)).status).toBe(403);
    expect((await raw('/bot123456789:guess/getMe', { host: foreign.host })).status).toBe(401);
  });

  it('take a token that is new for every server unless one is given', async () => {
    const other = createTelegramServer();
    expect(server.token).not.toBe(other.token);
    expect(server.token).toMatch(/^123456789:[A-Za-z0-9_-]{32}$/);
    expect(server.token).not.toBe('123456789:sandbox-token');
    expect(createTelegramServer({ token: '4242:chosen' }).token).toBe('4242:chosen');
    // The old public token opens nothing.
    expect((await raw('/bot123456789:sandbox-token/getMe', { host: `127.0.0.1:${port}` })).status).toBe(401);
  });
});
