/**
 * Voice notes through the gateway, against the stand-in Telegram and the stand-in transcriber over HTTP
 * on 127.0.0.1 (the bridge a protocol client): the words reach the bridge as the user's message, marked
 * as transcribed with the length, the recording beside them; the chat sees what was heard, quietly;
 * every way transcription fails still delivers the note, as a file with the reason, and says so; a
 * slow transcription holds only its own chat's lane.
 */
import { readFileSync } from 'node:fs';
import { createTranscriptionServer, oggOpusNote, type TranscriptionServer } from '@switchyard/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { connectBridge, framesOf, startWorld, waitUntil } from './harness.js';

const servers: TranscriptionServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function transcriber(options: Parameters<typeof createTranscriptionServer>[0] = {}) {
  const server = createTranscriptionServer(options);
  servers.push(server);
  return { server, ...(await server.start()) };
}

describe('voice notes at intake', () => {
  it('sends the transcript as the user message with its length and the recording, and echoes it quietly as a reply', async () => {
    const { server, url } = await transcriber({ key: 'sk-voice' });
    const world = await startWorld({ voice: { url, model: 'whisper-1', key: 'sk-voice', language: 'en' } });
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    const bytes = oggOpusNote('rename the branch to release', 12);
    const note = world.tg.sendVoice(chatId, { data: bytes, duration: 12 });
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    expect(frame.text).toBe(
      '[voice message, 0:12, transcribed from speech; the recording is attached]\nrename the branch to release',
    );
    expect(frame.attachments).toEqual([
      expect.objectContaining({
        kind: 'document',
        name: 'voice-message.ogg',
        mime: 'audio/ogg',
        size: bytes.length,
      }),
    ]);
    expect(readFileSync(frame.attachments[0]?.path ?? '').equals(bytes)).toBe(true);
    expect(Buffer.from(server.requests()[0]?.bytes ?? []).equals(bytes)).toBe(true);
    expect(server.requests()[0]).toMatchObject({
      model: 'whisper-1',
      authorization: 'Bearer sk-voice',
      language: 'en',
    });
    const echo = await waitUntil(() =>
      world.tg.messages(chatId).find((m) => m.from === 'bot' && m.text.startsWith('🎤')),
    );
    expect(echo).toMatchObject({
      text: '🎤 “rename the branch to release”',
      replyToMessageId: note.messageId,
      silent: true,
    });
  });

  it('without a transcriber, passes the note on as a file and says why', async () => {
    const world = await startWorld();
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    world.tg.sendVoice(chatId, { data: oggOpusNote('x', 3), duration: 3 });
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    expect(frame.text).toBe(
      '[voice message, 0:03, not transcribed: no transcriber is configured; the recording is attached as a file]',
    );
    expect(frame.attachments).toHaveLength(1);
    const said = await waitUntil(() =>
      world.tg.messages(chatId).find((m) => m.from === 'bot' && m.text.startsWith('Voice')),
    );
    expect(said.text).toBe(
      'Voice messages are not transcribed here (no transcriber is configured). I passed the recording to the agent as a file.',
    );
    expect(said.silent).toBe(false);
  });

  it('a transcriber that is down: a clear reply, and the note still reaches the agent with the reason', async () => {
    const { server, url } = await transcriber();
    await server.stop();
    const world = await startWorld({ voice: { url, model: 'm' } });
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    world.tg.sendVoice(chatId, { data: oggOpusNote('x', 5), duration: 5, caption: 'see this' });
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    expect(frame.text).toBe(
      `[voice message, 0:05, not transcribed: transcription failed (cannot reach the transcriber at ${url} (ECONNREFUSED)); the recording is attached as a file]\n\nsee this`,
    );
    expect(frame.attachments).toHaveLength(1);
    await waitUntil(() =>
      world.tg
        .messages(chatId)
        .find(
          (m) =>
            m.text ===
            `I could not transcribe that: cannot reach the transcriber at ${url} (ECONNREFUSED). I passed the recording to the agent as a file.`,
        ),
    );
  });

  it('refuses a 10-minute note over the cap politely, without uploading it, and passes it on as a file', async () => {
    const { server, url } = await transcriber();
    const world = await startWorld({ voice: { url, model: 'm' } });
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    world.tg.sendVoice(chatId, { data: oggOpusNote('long', 600), duration: 600 });
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    expect(frame.text).toContain('not transcribed: it is longer than the 5:00 transcription limit');
    await waitUntil(() =>
      world.tg
        .messages(chatId)
        .find((m) => m.text.startsWith('That recording is 10:00 long, and I transcribe up to 5:00, sorry.')),
    );
    expect(server.requests()).toHaveLength(0);
  });

  it('a 10-minute note whose message says 3 s is held to its real length: refused, not transcribed (the client’s duration is not trusted)', async () => {
    const { server, url } = await transcriber();
    const world = await startWorld({ voice: { url, model: 'm' } });
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    world.tg.sendVoice(chatId, { data: oggOpusNote('long', 600), duration: 3 });
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    expect(frame.text).toContain('[voice message, 10:00, not transcribed: it is longer than the 5:00');
    expect(server.requests()).toHaveLength(0);
  });

  it('a 4-second note whose message says 10 minutes is transcribed, and its length is the file’s', async () => {
    const { server, url } = await transcriber();
    const world = await startWorld({ voice: { url, model: 'm' } });
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    world.tg.sendVoice(chatId, { data: oggOpusNote('short and sweet', 4), duration: 600 });
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    expect(frame.text).toBe(
      '[voice message, 0:04, transcribed from speech; the recording is attached]\nshort and sweet',
    );
    expect(server.requests()).toHaveLength(1);
  });

  it("a slow transcription holds only its own chat's lane: another chat is answered meanwhile, and its own next message waits its turn", async () => {
    const { server, url } = await transcriber({ delayMs: 1_500 });
    const world = await startWorld({ voice: { url, model: 'm', timeoutMs: 20_000 } });
    const bridge = await connectBridge(world.socketPath);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    const group = tg.createGroup({ title: 'g', supergroup: true });
    tg.sendVoice(chatId, { data: oggOpusNote('first', 2), duration: 2 });
    await waitUntil(() => server.requests().length === 1);
    tg.sendText(chatId, 'second');
    tg.sendText(group.id, `@${tg.botUser.username} elsewhere`);
    const texts = () => framesOf(bridge, 'user_message').map((f) => f.text);
    await waitUntil(() => texts().length === 3, 10_000);
    expect(texts()[0]).toContain('elsewhere');
    expect(texts()[1]).toContain('first');
    expect(texts()[2]).toBe('second');
  });

  it('a transcriber that answers too slowly times out: a clear reply, and the note is passed on', async () => {
    const { url } = await transcriber({ delayMs: 30_000 });
    const world = await startWorld({ voice: { url, model: 'm', timeoutMs: 500 } });
    const bridge = await connectBridge(world.socketPath);
    const chatId = world.tg.privateChat().id;
    world.tg.sendVoice(chatId, { data: oggOpusNote('x', 4), duration: 4 });
    const frame = await waitUntil(() => framesOf(bridge, 'user_message')[0]);
    expect(frame.text).toContain('not transcribed: the transcriber did not answer within 1 s');
    await waitUntil(() =>
      world.tg.messages(chatId).find((m) => m.text.startsWith('Transcribing that took longer')),
    );
  });
});
