/**
 * The transcriber against the sandbox's OpenAI-compatible stand-in over real HTTP on 127.0.0.1: what
 * the server receives is the note (bytes, model, key, language), and every way it can go wrong is a
 * typed outcome with a reason, on an injected clock. The command backend spawns processes, so its
 * tests are in tests/gateway/voice-command.test.ts; only its argument substitution is here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '@switchyard/protocol';
import { createTranscriptionServer, SAYS_MARKER, type TranscriptionServer } from '@switchyard/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { createTranscriber, type VoiceFile } from '../src/index.js';
import { commandFor } from '../src/io/voice/command-transcriber.js';

const servers: TranscriptionServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function standIn(options: Parameters<typeof createTranscriptionServer>[0] = {}) {
  const server = createTranscriptionServer(options);
  servers.push(server);
  const { url } = await server.start();
  return { server, url };
}

function note(bytes: Uint8Array, durationSeconds = 4): VoiceFile {
  const dir = mkdtempSync(join(tmpdir(), 'voice-'));
  dirs.push(dir);
  const path = join(dir, 'in-1.ogg');
  writeFileSync(path, bytes);
  return { path, durationSeconds, mime: 'audio/ogg' };
}

/** A fake OGG that the stand-in hears as `said`. */
function oggSaying(said: string): Uint8Array {
  return Buffer.concat([
    Buffer.from('OggS\0\x02'),
    Buffer.from(`${SAYS_MARKER}${said}\n`),
    Buffer.alloc(64, 7),
  ]);
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('the OpenAI-compatible backend', () => {
  it('uploads the note itself under the configured model, key and language, and returns what was heard', async () => {
    const { server, url } = await standIn({ key: 'sk-test-123' });
    const bytes = oggSaying('please rename the branch');
    const transcriber = createTranscriber({
      url,
      model: 'whisper-large-v3',
      key: 'sk-test-123',
      language: 'en',
    });
    const outcome = await transcriber.transcribe(note(bytes));
    expect(outcome).toEqual({ kind: 'text', text: 'please rename the branch' });
    const [request] = server.requests();
    expect(Buffer.from(request?.bytes ?? []).equals(Buffer.from(bytes))).toBe(true);
    expect(request).toMatchObject({
      model: 'whisper-large-v3',
      authorization: 'Bearer sk-test-123',
      language: 'en',
      responseFormat: 'json',
      mimeType: 'audio/ogg',
      fileName: 'in-1.ogg',
    });
  });

  it('sends no Authorization header when no key is configured (a local server)', async () => {
    const { server, url } = await standIn();
    const outcome = await createTranscriber({ url: `${url}/`, model: 'base' }).transcribe(
      note(oggSaying('hi')),
    );
    expect(outcome).toEqual({ kind: 'text', text: 'hi' });
    expect(server.requests()[0]?.authorization).toBeUndefined();
    expect(server.requests()[0]?.language).toBeUndefined();
  });

  it('times out a slow server on the injected clock, at its deadline', async () => {
    const { server, url } = await standIn({ delayMs: 60_000 });
    const clock = new ManualClock(1_000);
    const transcriber = createTranscriber({ url, model: 'm', timeoutMs: 30_000 }, { clock });
    let settled: unknown;
    const outcome = transcriber.transcribe(note(oggSaying('slow'))).then((o) => {
      settled = o;
      return o;
    });
    await until(() => server.requests().length === 1);
    clock.advance(29_999);
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBeUndefined();
    clock.advance(1);
    expect(await outcome).toEqual({ kind: 'timed_out', afterMs: 30_000 });
    expect(clock.pending).toBe(0);
  });

  it('fails clearly when the server is down', async () => {
    const { server, url } = await standIn();
    await server.stop();
    const outcome = await createTranscriber({ url, model: 'm' }).transcribe(note(oggSaying('x')));
    expect(outcome).toEqual({
      kind: 'failed',
      reason: `cannot reach the transcriber at ${url} (ECONNREFUSED)`,
    });
  });

  it('never sends a key over plain http:// beyond loopback: refused before any request, without the key', async () => {
    const asked: string[] = [];
    const spy: typeof fetch = async (input) => {
      asked.push(String(input));
      return new Response('{"text":"x"}');
    };
    const remote = createTranscriber(
      { url: 'http://stt.example.com:8080/v1', model: 'm', key: 'sk-plain' },
      { fetch: spy },
    );
    const outcome = await remote.transcribe(note(oggSaying('x')));
    expect(outcome).toEqual({
      kind: 'failed',
      reason:
        "the transcriber's URL is plain http:// to stt.example.com: the key is not sent unencrypted (use https://)",
    });
    expect(asked).toEqual([]);
    // Loopback over http, and a remote server without a key, are asked.
    await createTranscriber(
      { url: 'http://127.0.0.1:9/v1', model: 'm', key: 'k' },
      { fetch: spy },
    ).transcribe(note(oggSaying('x')));
    await createTranscriber({ url: 'http://stt.example.com:8080/v1', model: 'm' }, { fetch: spy }).transcribe(
      note(oggSaying('x')),
    );
    expect(asked).toEqual([
      'http://127.0.0.1:9/v1/audio/transcriptions',
      'http://stt.example.com:8080/v1/audio/transcriptions',
    ]);
  });

  it("fails with the server's own message on an HTTP error, and a refused key says where to fix it without showing it", async () => {
    const { server, url } = await standIn({ key: 'right-key' });
    server.failNext(503, 'model is loading');
    const transcriber = createTranscriber({ url, model: 'm', key: 'wrong-key-secret' });
    expect(await transcriber.transcribe(note(oggSaying('x')))).toEqual({
      kind: 'failed',
      reason: 'the transcriber answered HTTP 503 (model is loading)',
    });
    const refused = await transcriber.transcribe(note(oggSaying('x')));
    expect(refused).toEqual({
      kind: 'failed',
      reason:
        'the transcriber answered HTTP 401 (Incorrect API key provided.): check voice.key in the config',
    });
    expect(JSON.stringify(refused)).not.toContain('wrong-key-secret');
  });

  it('refuses a note over the duration cap without uploading it (default cap five minutes)', async () => {
    const { server, url } = await standIn();
    const transcriber = createTranscriber({ url, model: 'm' });
    expect(await transcriber.transcribe(note(oggSaying('long'), 600))).toEqual({
      kind: 'too_long',
      seconds: 600,
      maxSeconds: 300,
    });
    expect(
      await createTranscriber({ url, model: 'm', maxSeconds: 30 }).transcribe(note(oggSaying('x'), 31)),
    ).toEqual({ kind: 'too_long', seconds: 31, maxSeconds: 30 });
    expect(server.requests()).toHaveLength(0);
    expect((await transcriber.transcribe(note(oggSaying('five minutes'), 300))).kind).toBe('text');
  });

  it('answers unconfigured when no transcriber is configured', async () => {
    expect(await createTranscriber(undefined).transcribe(note(oggSaying('x')))).toEqual({
      kind: 'unconfigured',
    });
  });

  it('counts a silent recording as a failure, with its reason', async () => {
    const { url } = await standIn({ text: '  ' });
    expect(await createTranscriber({ url, model: 'm' }).transcribe(note(oggSaying('x')))).toEqual({
      kind: 'failed',
      reason: 'no speech was recognised in it',
    });
  });
});

describe('the command backend', () => {
  it('puts the path wherever {file} appears in the arguments, and nowhere else', () => {
    const file = { path: '/state/files/in-1.ogg', durationSeconds: 3 };
    expect(commandFor(['whisper-cli', '-m', 'model.bin', '-nt', '-f', '{file}'], file)).toEqual([
      'whisper-cli',
      ['-m', 'model.bin', '-nt', '-f', '/state/files/in-1.ogg'],
    ]);
    expect(commandFor(['rec', '--input={file}', '{file}.txt'], file)).toEqual([
      'rec',
      ['--input=/state/files/in-1.ogg', '/state/files/in-1.ogg.txt'],
    ]);
  });
});
