/**
 * What a transcribed (or untranscribed) voice note becomes: the text the agent reads as the user's
 * message, and what the chat is shown. Pure; `io/voice/voice-intake.ts` downloads, transcribes and sends.
 *
 * Contract:
 * - The agent always gets the message. Transcribed, it reads the words marked as transcribed from a
 *   voice note of the given length, with the recording's path beside them (the attachment); not
 *   transcribed, it reads why, with the recording as a file to handle as it can. A caption follows.
 * - The chat sees what was heard, quietly (a silent reply to the note), so a misheard word is caught
 *   before the agent acts on it; or, when nothing was heard, a plain reply saying why and that the
 *   recording went to the agent as a file.
 */

/** A recording a user sent, as the rules need it. */
export interface SpokenNote {
  /** `voice` (a voice note), `audio` (an audio file) or `video_note` (a round video). */
  kind: 'voice' | 'audio' | 'video_note';
  /** Its length in seconds. */
  durationSeconds: number;
}

/** What came of transcribing it (the transcriber's outcome, in the core's terms). */
export type Heard =
  | { kind: 'text'; text: string }
  | { kind: 'unconfigured' }
  | { kind: 'too_long'; seconds: number; maxSeconds: number }
  | { kind: 'failed'; reason: string }
  | { kind: 'timed_out'; afterMs: number };

/** The message for the agent, and what the chat is told (a quiet echo of the words, or a reply). */
export interface VoiceText {
  /** The user message's text. */
  text: string;
  /** Sent to the chat as a reply to the note; `quiet` ones without a notification. */
  notice: { text: string; quiet: boolean };
}

/** Telegram's message length, which the echo is held to. */
const ECHO_LIMIT = 4096;

/** A length as Telegram's clients show it: `m:ss`, or `h:mm:ss` from an hour. */
export function clockText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  return hours > 0 ? `${hours}:${two(minutes)}:${two(s % 60)}` : `${minutes}:${two(s % 60)}`;
}

/** How each kind is named in a sentence. */
const NOUN: Record<SpokenNote['kind'], string> = {
  voice: 'voice message',
  audio: 'audio file',
  video_note: 'video message',
};

/** The agent's text and the chat's notice for `note`, heard as `heard`; `caption` is the user's own text. */
export function voiceText(note: SpokenNote, heard: Heard, caption: string): VoiceText {
  const noun = NOUN[note.kind];
  const length = clockText(note.durationSeconds);
  const withCaption = (text: string) => (caption.trim() === '' ? text : `${text}\n\n${caption}`);
  if (heard.kind === 'text') {
    const echo = `🎤 “${heard.text}”`;
    return {
      text: withCaption(
        `[${noun}, ${length}, transcribed from speech; the recording is attached]\n${heard.text}`,
      ),
      notice: { text: echo.length > ECHO_LIMIT ? `${echo.slice(0, ECHO_LIMIT - 2)}…”` : echo, quiet: true },
    };
  }
  const why = reasonOf(heard);
  return {
    text: withCaption(
      `[${noun}, ${length}, not transcribed: ${why.forAgent}; the recording is attached as a file]`,
    ),
    notice: { text: `${why.forUser} I passed the recording to the agent as a file.`, quiet: false },
  };
}

/** Why nothing was heard, told to the agent and to the user. */
function reasonOf(heard: Exclude<Heard, { kind: 'text' }>): { forAgent: string; forUser: string } {
  switch (heard.kind) {
    case 'unconfigured':
      return {
        forAgent: 'no transcriber is configured',
        forUser: 'Voice messages are not transcribed here (no transcriber is configured).',
      };
    case 'too_long':
      return {
        forAgent: `it is longer than the ${clockText(heard.maxSeconds)} transcription limit`,
        forUser: `That recording is ${clockText(heard.seconds)} long, and I transcribe up to ${clockText(heard.maxSeconds)}, sorry. For a transcript, please send a shorter one.`,
      };
    case 'timed_out':
      return {
        forAgent: `the transcriber did not answer within ${Math.round(heard.afterMs / 1000)} s`,
        forUser: `Transcribing that took longer than ${Math.round(heard.afterMs / 1000)} seconds, so I stopped.`,
      };
    case 'failed':
      return {
        forAgent: `transcription failed (${heard.reason})`,
        forUser: `I could not transcribe that: ${heard.reason}.`,
      };
  }
}
