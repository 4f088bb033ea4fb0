/**
 * Voice notes in the stand-in Telegram: a user's note reaches a real grammY bot as `voice` (duration,
 * MIME type, file_id) and downloads through getFile; the web view sends an audio file as a voice note.
 * And the transcription stand-in: what it hears, what it records, and how it plays a server in trouble.
 */
import { Bot } from 'grammy';
import type { Voice } from 'grammy/types';
import { afterEach, describe, expect, it } from 'vitest';
import { createTelegramServer, type TelegramServer } from '../src/telegram/index.js';
import {
  createTranscriptionServer,
  SAYS_MARKER,
  type TranscriptionServer,
} from '../src/transcription/index.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function telegram(): Promise<{ server: TelegramServer; apiRoot: string; key: string }> {
  const server = createTelegramServer();
  stops.push(() => server.stop());
  const address = await server.start();
  const key = new URL(address.webUrl ?? '').searchParams.get('k') ?? '';
  return { server, apiRoot: address.apiRoot, key };
}

async function transcription(options: Parameters<typeof createTranscriptionServer>[0] = {}) {
  const server: TranscriptionServer = createTranscriptionServer(options);
  stops.push(() => server.stop());
  return { server, ...(await server.start()) };
}

const OGG = Buffer.concat([Buffer.from('OggS\0\x02'), Buffer.from(`${SAYS_MARKER}hello there\n`)]);

describe('voice notes in the stand-in Telegram', () => {
  it('delivers a voice note to a grammY bot with duration, MIME type and file_id, and serves its bytes', async () => {
    const { server, apiRoot } = await telegram();
    const bot = new Bot(server.token, { client: { apiRoot } });
    const heard: Voice[] = [];
    const downloaded: Buffer[] = [];
    bot.on('message:voice', async (ctx) => {
      heard.push(ctx.msg.voice);
      const file = await ctx.getFile();
      const res = await fetch(`${apiRoot}/file/bot${server.token}/${file.file_path}`);
      downloaded.push(Buffer.from(await res.arrayBuffer()));
    });
    bot.catch((err) => {
      throw err.error;
    });
    await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }));
    stops.push(() => bot.stop());
    const chat = server.privateChat();
    const sent = server.sendVoice(chat.id, { data: OGG, duration: 7 });
    expect(sent).toMatchObject({
      kind: 'voice',
      file: { duration: 7, mimeType: 'audio/ogg', size: OGG.length },
    });
    for (let i = 0; i < 500 && downloaded.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(heard[0]).toMatchObject({ duration: 7, mime_type: 'audio/ogg', file_size: OGG.length });
    expect(heard[0]?.file_id).toMatch(/^AwAC/);
    expect(downloaded[0]?.equals(OGG)).toBe(true);
    expect(() => server.sendVoice(chat.id, { data: OGG, duration: 1.5 })).toThrow(/whole seconds/);
  });

  it('the web view sends an audio file as a voice note, with the duration the page measured or an estimate', async () => {
    const { server, apiRoot, key } = await telegram();
    const chat = server.privateChat();
    const upload = async (fields: Record<string, string>, type: string) => {
      const form = new FormData();
      form.set('chatId', String(chat.id));
      for (const [name, value] of Object.entries(fields)) form.set(name, value);
      form.set('file', new Blob([new Uint8Array(OGG)], { type }), 'note.ogg');
      const res = await fetch(`${apiRoot}/web/api/upload`, {
        method: 'POST',
        headers: { 'x-sandbox-view': key },
        body: form,
      });
      expect(res.status).toBe(200);
    };
    await upload({ voice: '1', duration: '12' }, 'audio/ogg');
    await upload({}, 'audio/mpeg');
    const [measured, estimated] = server.messages(chat.id);
    expect(measured).toMatchObject({ kind: 'voice', file: { duration: 12, mimeType: 'audio/ogg' } });
    expect(estimated).toMatchObject({ kind: 'voice', file: { duration: 1, mimeType: 'audio/mpeg' } });
    expect(server.pendingUpdates()[0]?.message?.voice).toMatchObject({
      duration: 12,
      mime_type: 'audio/ogg',
    });
  });
});

describe('the transcription stand-in', () => {
  const post = (url: string, form: FormData, key?: string) =>
    fetch(`${url}/audio/transcriptions`, {
      method: 'POST',
      body: form,
      ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}),
    });
  const noteForm = (bytes: Uint8Array) => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(bytes)], { type: 'audio/ogg' }), 'v.ogg');
    form.set('model', 'whisper-1');
    return form;
  };

  it('hears the marker a test file carries, or names the size of any other recording, and records each request', async () => {
    const { server, url } = await transcription();
    expect(await (await post(url, noteForm(OGG))).json()).toEqual({ text: 'hello there' });
    expect(await (await post(url, noteForm(new Uint8Array(1234)))).json()).toEqual({
      text: 'This is the sandbox transcriber: it heard a recording of 1234 bytes.',
    });
    expect(server.requests().map((r) => [r.model, r.fileName, r.bytes.length])).toEqual([
      ['whisper-1', 'v.ogg', OGG.length],
      ['whisper-1', 'v.ogg', 1234],
    ]);
  });

  it('demands its key when given one, fails on request, and answers other routes with 404', async () => {
    const { server, url } = await transcription({ key: 'k1', text: 'fixed' });
    expect((await post(url, noteForm(OGG))).status).toBe(401);
    expect(await (await post(url, noteForm(OGG), 'k1')).json()).toEqual({ text: 'fixed' });
    server.failNext(500, 'boom');
    const failed = await post(url, noteForm(OGG), 'k1');
    expect([failed.status, await failed.json()]).toEqual([
      500,
      { error: { message: 'boom', type: 'server_error' } },
    ]);
    expect((await fetch(`${url}/models`)).status).toBe(404);
  });

  it('holds answers while slow, and stop() ends a held request at once', async () => {
    const { server, url } = await transcription({ delayMs: 60_000 });
    const held = post(url, noteForm(OGG)).then(
      () => 'answered',
      () => 'closed',
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(server.requests()).toHaveLength(1);
    const started = Date.now();
    await server.stop();
    expect(await held).toBe('closed');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
