/**
 * What a recording becomes, as a table: the agent's text (marked as transcribed with its length, or why
 * not, the caption after it) and the chat's notice (a quiet echo, or a reply saying why).
 */
import { describe, expect, it } from 'vitest';
import { clockText, type Heard, type SpokenNote, voiceText } from '../../src/core/voice/voice-text.js';

const voice = (durationSeconds: number): SpokenNote => ({ kind: 'voice', durationSeconds });

describe('voiceText', () => {
  it.each<[string, SpokenNote, Heard, string, { text: string; notice: { text: string; quiet: boolean } }]>([
    [
      'heard',
      voice(7),
      { kind: 'text', text: 'ship it' },
      '',
      {
        text: '[voice message, 0:07, transcribed from speech; the recording is attached]\nship it',
        notice: { text: '🎤 “ship it”', quiet: true },
      },
    ],
    [
      'heard, with a caption',
      { kind: 'audio', durationSeconds: 65 },
      { kind: 'text', text: 'minutes' },
      'from the standup',
      {
        text: '[audio file, 1:05, transcribed from speech; the recording is attached]\nminutes\n\nfrom the standup',
        notice: { text: '🎤 “minutes”', quiet: true },
      },
    ],
    [
      'none configured',
      { kind: 'video_note', durationSeconds: 3 },
      { kind: 'unconfigured' },
      '',
      {
        text: '[video message, 0:03, not transcribed: no transcriber is configured; the recording is attached as a file]',
        notice: {
          text: 'Voice messages are not transcribed here (no transcriber is configured). I passed the recording to the agent as a file.',
          quiet: false,
        },
      },
    ],
    [
      'over the cap',
      voice(600),
      { kind: 'too_long', seconds: 600, maxSeconds: 300 },
      '',
      {
        text: '[voice message, 10:00, not transcribed: it is longer than the 5:00 transcription limit; the recording is attached as a file]',
        notice: {
          text: 'That recording is 10:00 long, and I transcribe up to 5:00, sorry. For a transcript, please send a shorter one. I passed the recording to the agent as a file.',
          quiet: false,
        },
      },
    ],
    [
      'timed out',
      voice(9),
      { kind: 'timed_out', afterMs: 120_000 },
      '',
      {
        text: '[voice message, 0:09, not transcribed: the transcriber did not answer within 120 s; the recording is attached as a file]',
        notice: {
          text: 'Transcribing that took longer than 120 seconds, so I stopped. I passed the recording to the agent as a file.',
          quiet: false,
        },
      },
    ],
    [
      'failed',
      voice(9),
      { kind: 'failed', reason: 'the transcriber answered HTTP 503' },
      '',
      {
        text: '[voice message, 0:09, not transcribed: transcription failed (the transcriber answered HTTP 503); the recording is attached as a file]',
        notice: {
          text: 'I could not transcribe that: the transcriber answered HTTP 503. I passed the recording to the agent as a file.',
          quiet: false,
        },
      },
    ],
  ])('%s', (_name, note, heard, caption, expected) => {
    expect(voiceText(note, heard, caption)).toEqual(expected);
  });

  it('holds the echo to one Telegram message', () => {
    const { notice } = voiceText(voice(300), { kind: 'text', text: 'a'.repeat(5000) }, '');
    expect(notice.text.length).toBe(4096);
    expect(notice.text.endsWith('…”')).toBe(true);
  });

  it('shows lengths as the clients do', () => {
    expect([0, 5, 59.6, 61, 600, 3600, 3725].map(clockText)).toEqual([
      '0:00',
      '0:05',
      '1:00',
      '1:01',
      '10:00',
      '1:00:00',
      '1:02:05',
    ]);
  });
});
