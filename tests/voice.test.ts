/**
 * Voice notes through the whole system: the gateway and the bridge as processes, the real CLI against
 * the scripted model, the stand-in Telegram, and a transcriber — the OpenAI-compatible stand-in over
 * HTTP, or a program (a tiny node script) through the command form. What must hold: the words reach the
 * model as the user's message, marked as transcribed, with the recording's path; the transcriber got
 * the note's own bytes under the configured model and key; the chat sees what was heard. A transcriber
 * that is slow or down, and a note over the cap, get a clear reply and lose nothing: the model still
 * gets the note, as a file with the reason.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createTranscriptionServer,
  oggOpusNote,
  rule,
  SAYS_MARKER,
  say,
  type TelegramServer,
  type TranscriptionServer,
  type TurnContext,
} from '@switchyard/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { botMessages, type System, systemPerTest } from './system.js';

const standIns: TranscriptionServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(standIns.splice(0).map((s) => s.stop()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sy-voice-'));
  dirs.push(dir);
  return dir;
}

async function standIn(options: Parameters<typeof createTranscriptionServer>[0] = {}) {
  const server = createTranscriptionServer(options);
  standIns.push(server);
  return { server, ...(await server.start()) };
}

/** Whether the real recognizer's tools are installed (Debian: espeak-ng, opus-tools, pocketsphinx). */
const SPEECH_TOOLS = ['espeak-ng', 'opusenc', 'opusdec', 'pocketsphinx_continuous'].every((tool) => {
  try {
    execFileSync('which', [tool], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

/** The model answers a transcribed message with its words, and an untranscribed one with its reason. */
const RULES = [
  rule(
    (ctx: TurnContext) => ctx.userText.includes('transcribed from speech'),
    (ctx: TurnContext) => say(`Heard: ${ctx.userText.trim().split('\n').at(-1) ?? ''}`),
  ),
  rule((ctx: TurnContext) => ctx.userText.includes('not transcribed'), say('I got the recording as a file.')),
  rule('ping', say('pong')),
];

/** What the model was given as the user's text, across every request so far. */
const userTexts = (system: System) => system.model.messageRequests().map((r) => r.view?.userText ?? '');

async function answer(telegram: TelegramServer, chatId: number, text: string) {
  return telegram.waitFor(() => botMessages(telegram, chatId).find((m) => m.text === text), {
    timeoutMs: 90_000,
  });
}

describe('end to end: voice notes', () => {
  const startSystem = systemPerTest();

  it('reaches the model as its transcript through an OpenAI-compatible server, which got the very note under the configured model and key', async () => {
    const { server, url } = await standIn({ key: 'sk-e2e-voice' });
    const keyFile = path.join(scratch(), 'voice.key');
    writeFileSync(keyFile, 'sk-e2e-voice\n');
    const system = await startSystem({
      rules: RULES,
      agent: () => ({ voice: { url, model: 'whisper-e2e', key: { file: keyFile }, language: 'en' } }),
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    const bytes = oggOpusNote('deploy the staging build', 14);
    const note = telegram.sendVoice(chatId, { data: bytes, duration: 14 });
    await answer(telegram, chatId, 'Heard: deploy the staging build');
    const given = userTexts(system).find((t) => t.includes('transcribed from speech')) ?? '';
    expect(given).toContain('[voice message, 0:14, transcribed from speech; the recording is attached]');
    const file = /\[file: ([^ \]]+\.ogg) \(voice-message\.ogg, audio\/ogg, /.exec(given)?.[1];
    expect(file, given).toBeDefined();
    expect(readFileSync(file ?? '').equals(bytes)).toBe(true);
    const [request] = server.requests();
    expect(Buffer.from(request?.bytes ?? []).equals(bytes)).toBe(true);
    expect(request).toMatchObject({
      model: 'whisper-e2e',
      authorization: 'Bearer sk-e2e-voice',
      language: 'en',
    });
    const echo = botMessages(telegram, chatId).find((m) => m.text.startsWith('🎤'));
    expect(echo).toMatchObject({
      text: '🎤 “deploy the staging build”',
      replyToMessageId: note.messageId,
      silent: true,
    });
    expect(system.logs()).not.toContain('sk-e2e-voice');
  });

  it('reaches the model as its transcript through the command form', async () => {
    const recognizer = path.join(scratch(), 'recognizer.cjs');
    writeFileSync(
      recognizer,
      `const text = require('node:fs').readFileSync(process.argv[2], 'latin1');
       const at = text.indexOf(${JSON.stringify(SAYS_MARKER)});
       process.stdout.write(' ' + text.slice(at + ${SAYS_MARKER.length}).split('\\n')[0] + '\\n');`,
    );
    const system = await startSystem({
      rules: RULES,
      agent: () => ({ voice: { command: [process.execPath, recognizer, '{file}'] } }),
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendVoice(chatId, { data: oggOpusNote('open a pull request', 3), duration: 3 });
    await answer(telegram, chatId, 'Heard: open a pull request');
    expect(userTexts(system).some((t) => t.includes('[voice message, 0:03, transcribed from speech'))).toBe(
      true,
    );
  });

  it('a transcriber that is slow, then down: a clear reply each time, and the model still gets every note', async () => {
    const { server, url } = await standIn({ delayMs: 60_000 });
    const system = await startSystem({
      rules: RULES,
      agent: () => ({ voice: { url, model: 'm', timeoutSeconds: 2 } }),
    });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendVoice(chatId, { data: oggOpusNote('first', 4), duration: 4 });
    await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).find((m) =>
          m.text.startsWith('Transcribing that took longer than 2 seconds'),
        ),
      { timeoutMs: 60_000 },
    );
    await answer(telegram, chatId, 'I got the recording as a file.');
    await server.stop();
    telegram.sendVoice(chatId, { data: oggOpusNote('second', 5), duration: 5 });
    await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).find(
          (m) =>
            m.text ===
            `I could not transcribe that: cannot reach the transcriber at ${url} (ECONNREFUSED). I passed the recording to the agent as a file.`,
        ),
      { timeoutMs: 60_000 },
    );
    await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).filter((m) => m.text === 'I got the recording as a file.').length === 2,
      { timeoutMs: 90_000 },
    );
    const untranscribed = userTexts(system).filter((t) => t.includes('not transcribed'));
    expect(
      untranscribed.some((t) =>
        t.includes('[voice message, 0:04, not transcribed: the transcriber did not answer within 2 s'),
      ),
    ).toBe(true);
    expect(
      untranscribed.some((t) =>
        t.includes('[voice message, 0:05, not transcribed: transcription failed (cannot reach'),
      ),
    ).toBe(true);
    expect(untranscribed.every((t) => t.includes('[file: '))).toBe(true);
    // The chat's lane went on: a text after them is answered.
    telegram.sendText(chatId, 'ping');
    await answer(telegram, chatId, 'pong');
  });

  it('a gateway killed while it transcribes takes the note again when it is back: nothing is lost', async () => {
    const { server, url } = await standIn({ delayMs: 60_000 });
    const system = await startSystem({ rules: RULES, agent: () => ({ voice: { url, model: 'm' } }) });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendVoice(chatId, { data: oggOpusNote('survive the crash', 6), duration: 6 });
    // Polled here: the stand-in Telegram's waitFor looks again only when something happens in it.
    for (let i = 0; i < 600 && server.requests().length === 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(server.requests()).toHaveLength(1);
    await system.kill('gateway');
    server.setDelay(0);
    system.start('gateway');
    await answer(telegram, chatId, 'Heard: survive the crash');
    expect(server.requests().length).toBeGreaterThanOrEqual(2);
    expect(userTexts(system).filter((t) => t.includes('survive the crash'))).toHaveLength(1);
  });

  // Optional (skipped where Debian's espeak-ng, opus-tools and pocketsphinx are missing; CI installs
  // them): a sentence spoken by espeak-ng, encoded as OGG/Opus as a phone sends it, and recognized by a
  // real recognizer through the command form. pocketsphinx hears synthetic speech well only within a
  // grammar, so the recognizer is given one.
  it.skipIf(!SPEECH_TOOLS)(
    'a spoken sentence is recognized by a real recognizer through the command form',
    async () => {
      const dir = scratch();
      const grammar = path.join(dir, 'commands.gram');
      writeFileSync(
        grammar,
        '#JSGF V1.0;\ngrammar commands;\npublic <command> = open the door | close the window | turn on the lights | what time is it;\n',
      );
      const recognizer = path.join(dir, 'recognize.cjs');
      writeFileSync(
        recognizer,
        `const { execFileSync } = require('node:child_process');
       const wav = process.argv[2] + '.wav';
       execFileSync('opusdec', ['--quiet', '--rate', '16000', '--force-wav', process.argv[2], wav]);
       process.stdout.write(execFileSync('pocketsphinx_continuous', ['-infile', wav, '-jsgf', ${JSON.stringify(grammar)}, '-logfn', '/dev/null']));
       require('node:fs').rmSync(wav);`,
      );
      const spoken = path.join(dir, 'spoken.wav');
      const note = path.join(dir, 'note.ogg');
      execFileSync('espeak-ng', ['-s', '130', '-w', spoken, 'turn on the lights']);
      execFileSync('opusenc', ['--quiet', spoken, note]);
      const system = await startSystem({
        rules: RULES,
        agent: () => ({ voice: { command: [process.execPath, recognizer, '{file}'], timeoutSeconds: 60 } }),
      });
      const { telegram, chatId } = system;
      system.start('gateway');
      system.start('bridge');
      telegram.sendVoice(chatId, { data: readFileSync(note), duration: 2 });
      await answer(telegram, chatId, 'Heard: turn on the lights');
    },
  );

  it('refuses a 10-minute note over the cap politely, and the model gets it as a file', async () => {
    const { server, url } = await standIn();
    const system = await startSystem({ rules: RULES, agent: () => ({ voice: { url, model: 'm' } }) });
    const { telegram, chatId } = system;
    system.start('gateway');
    system.start('bridge');
    telegram.sendVoice(chatId, { data: oggOpusNote('a long ramble', 600), duration: 600 });
    await telegram.waitFor(
      () =>
        botMessages(telegram, chatId).find(
          (m) =>
            m.text ===
            'That recording is 10:00 long, and I transcribe up to 5:00, sorry. For a transcript, please send a shorter one. I passed the recording to the agent as a file.',
        ),
      { timeoutMs: 60_000 },
    );
    await answer(telegram, chatId, 'I got the recording as a file.');
    expect(
      userTexts(system).some((t) =>
        t.includes('[voice message, 10:00, not transcribed: it is longer than the 5:00 transcription limit'),
      ),
    ).toBe(true);
    expect(server.requests()).toHaveLength(0);
  });
});
