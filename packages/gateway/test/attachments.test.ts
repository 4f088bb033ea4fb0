/**
 * Attachments: photos (largest size) and documents are saved in the exchange directory with generated names
 * and passed by path with the caption as text; files over 20 MB and failed downloads get a clear reply
 * and never wedge the chat; other media kinds than recordings (voice-intake.test.ts) get "not supported yet".
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import { saveAttachments, TOO_BIG } from '../src/io/intake/attachments.js';
import { unsupportedKind } from '../src/io/intake/intake.js';
import {
  botMessage,
  connectBridge,
  type FakeBridge,
  framesOf,
  sleep,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';

let world: World | undefined;
let bridge: FakeBridge | undefined;

const SAFE_NAME = /^in-\d+-[0-9a-f]{12}\.[a-z0-9]{1,8}$/;
const inboxFiles = (w: World) => {
  try {
    return readdirSync(join(w.stateDir, 'files'));
  } catch {
    return [];
  }
};

describe('attachments', () => {
  it('saves a captioned photo in the exchange directory and passes it by path with the caption as text', async () => {
    world = await startWorld();
    bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    const bytes = new Uint8Array(50_000).map((_, i) => i % 251);
    tg.sendPhoto(chatId, { data: bytes, caption: 'what is in this picture?', width: 1600, height: 1200 });
    const frame = await waitUntil(() => framesOf(bridge as FakeBridge, 'user_message')[0]);
    expect(frame.text).toBe('what is in this picture?');
    expect(frame.attachments).toHaveLength(1);
    const [photo] = frame.attachments;
    expect(photo).toMatchObject({ kind: 'photo', size: bytes.length, mime: 'image/jpeg' });
    const path = photo?.path ?? '';
    expect(path.startsWith(`${join(world.stateDir, 'files')}/`)).toBe(true);
    expect(path.split('/').at(-1)).toMatch(SAFE_NAME);
    expect(Buffer.compare(readFileSync(path), Buffer.from(bytes))).toBe(0);
    expect(inboxFiles(world)).toHaveLength(1); // no `.part` left behind
  });

  it('saves a document under a generated name, whatever the sender called it', async () => {
    world = await startWorld();
    bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendDocument(chatId, {
      data: Buffer.from('%PDF-1.4 report'),
      fileName: 'Report.PDF',
      mimeType: 'application/pdf',
    });
    tg.sendDocument(chatId, { data: Buffer.from('root:x:0:0'), fileName: '../../etc/passwd' });
    await waitUntil(() => framesOf(bridge as FakeBridge, 'user_message').length === 2);
    const [report, sneaky] = framesOf(bridge, 'user_message').map((f) => f.attachments[0]);
    expect(report).toMatchObject({ kind: 'document', name: 'Report.PDF', mime: 'application/pdf' });
    expect(report?.path.endsWith('.pdf')).toBe(true);
    expect(sneaky?.name).toBe('../../etc/passwd'); // kept as metadata only
    for (const a of [report, sneaky]) {
      expect(a?.path.startsWith(`${join(world.stateDir, 'files')}/`)).toBe(true);
      expect(a?.path.split('/').at(-1)).toMatch(SAFE_NAME);
    }
    expect(readFileSync(sneaky?.path ?? '', 'utf8')).toBe('root:x:0:0');
    // No caption: the text is empty, the file still goes.
    expect(framesOf(bridge, 'user_message')[1]?.text).toBe('');
  });

  it('refuses a file over 20 MB clearly, without downloading it or telling the agent', async () => {
    world = await startWorld();
    bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.sendDocument(chatId, { data: new Uint8Array(20 * 1024 * 1024 + 1), fileName: 'huge.bin' });
    const reply = await botMessage(tg, chatId, (t) => t === TOO_BIG);
    expect(reply.text).toContain('20 MB');
    expect(tg.calls('getFile')).toHaveLength(0);
    await sleep(200);
    expect(framesOf(bridge, 'user_message')).toHaveLength(0);
    expect(inboxFiles(world)).toHaveLength(0);
  });

  it('says so when Telegram refuses the download, and the chat keeps working', async () => {
    world = await startWorld();
    bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    tg.failNext('getFile', { errorCode: 400, description: 'Bad Request: file is too big' });
    tg.sendPhoto(chatId, { data: new Uint8Array(10), caption: 'first' });
    await botMessage(tg, chatId, (t) => t === TOO_BIG);
    tg.failNext('getFile', { errorCode: 400, description: 'Bad Request: wrong file_id' });
    tg.sendPhoto(chatId, { data: new Uint8Array(10), caption: 'second' });
    await botMessage(tg, chatId, (t) => t.startsWith('Downloading that file failed'));
    tg.sendText(chatId, 'text still works');
    await waitUntil(() => framesOf(bridge as FakeBridge, 'user_message').length === 1);
    expect(framesOf(bridge, 'user_message')[0]?.text).toBe('text still works');
    // Nothing left unhandled to fail again at the next boot.
    await world.restart();
    await sleep(300);
    expect(framesOf(bridge, 'user_message')).toHaveLength(1);
  });

  it('downloads the largest photo size', async () => {
    const asked: string[] = [];
    const message = {
      message_id: 1,
      date: 0,
      chat: { id: 1, type: 'private', first_name: 'u' },
      photo: [
        { file_id: 'small', file_unique_id: 's', width: 90, height: 60, file_size: 10 },
        { file_id: 'medium', file_unique_id: 'm', width: 320, height: 240, file_size: 100 },
        { file_id: 'large', file_unique_id: 'l', width: 1280, height: 960, file_size: 1000 },
      ],
    } as Message;
    const result = await saveAttachments(message, {
      api: {
        getFile: async (id: string) => {
          asked.push(id);
          return { file_id: id, file_unique_id: id, file_path: 'photos/x.jpg' };
        },
      } as never,
      fileUrl: () => 'http://127.0.0.1:1/unreachable',
      exchange: { dir: '/nonexistent' },
    });
    expect(asked).toEqual(['large']);
    // The download fails (nothing listens there): a reply, not a throw.
    expect(result).toMatchObject({ ok: false });
  });
});

describe('unsupported kinds', () => {
  const base = { message_id: 1, date: 0, chat: { id: 1, type: 'private', first_name: 'u' } };
  const file = { file_id: 'f', file_unique_id: 'u' };
  it.each([
    ['video', { video: { ...file, width: 1, height: 1, duration: 1 } }, 'Videos'],
    [
      'sticker',
      { sticker: { ...file, type: 'regular', width: 1, height: 1, is_animated: false, is_video: false } },
      'Stickers',
    ],
    ['location', { location: { latitude: 1, longitude: 2 } }, 'Locations'],
  ])('a %s is "not supported yet"', (_name, content, word) => {
    expect(unsupportedKind({ ...base, ...content } as Message)).toContain(word);
  });
  it('text, photos, documents and recordings (voice, audio, video notes: transcribed) are supported', () => {
    expect(unsupportedKind({ ...base, voice: { ...file, duration: 1 } } as Message)).toBeUndefined();
    expect(unsupportedKind({ ...base, audio: { ...file, duration: 1 } } as Message)).toBeUndefined();
    expect(
      unsupportedKind({ ...base, video_note: { ...file, length: 1, duration: 1 } } as Message),
    ).toBeUndefined();
    expect(unsupportedKind({ ...base, text: 'hi' } as Message)).toBeUndefined();
    expect(unsupportedKind({ ...base, photo: [] } as unknown as Message)).toBeUndefined();
    expect(unsupportedKind({ ...base, document: file } as Message)).toBeUndefined();
  });
});
