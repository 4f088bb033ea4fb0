/**
 * The transcriber's types, shared by its two backends and its callers (`transcriber.ts` is the
 * interface and the deadline; the backends are `openai-transcriber.ts` and
 * `command-transcriber.ts`).
 */

/** Settings both backends share. */
export interface VoiceLimits {
  /** Notes longer than this many seconds are not transcribed; default {@link DEFAULT_VOICE_MAX_SECONDS}. */
  maxSeconds?: number;
  /** How long one transcription may take; default {@link DEFAULT_VOICE_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** An OpenAI-compatible server: `POST {url}/audio/transcriptions` (multipart: file, model, language). */
export interface HttpVoiceOptions extends VoiceLimits {
  /** The API's base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`. */
  url: string;
  /** The `model` field, e.g. `whisper-1`. */
  model: string;
  /** Sent as `Authorization: Bearer KEY`; absent for a local server that asks for none. Never logged. */
  key?: string;
  /** A language hint (ISO-639-1, e.g. `en`), sent as `language`. */
  language?: string;
}

/**
 * A local program: `command[0]` run with the rest as its arguments (no shell), every `{file}` in them
 * replaced by the note's path. Its stdout, lines joined by spaces, is the text; exit code 0 means it
 * succeeded.
 */
export interface CommandVoiceOptions extends VoiceLimits {
  command: readonly [string, ...string[]];
}

/** How voice notes are transcribed: one of the two backends. */
export type VoiceOptions = HttpVoiceOptions | CommandVoiceOptions;

/** The default duration cap: five minutes. */
export const DEFAULT_VOICE_MAX_SECONDS = 300;
/** The default deadline of one transcription: two minutes. */
export const DEFAULT_VOICE_TIMEOUT_MS = 120_000;

/** A saved recording to transcribe. */
export interface VoiceFile {
  /** Absolute path of the saved file. */
  path: string;
  /** Its length in seconds, read from the file (`core/voice/duration.ts`), not the client's `duration`. */
  durationSeconds: number;
  /** Its MIME type, when known (`audio/ogg` for voice notes). */
  mime?: string;
}

/** What came of one transcription. */
export type Transcription =
  | { kind: 'text'; text: string }
  | { kind: 'unconfigured' }
  | { kind: 'too_long'; seconds: number; maxSeconds: number }
  | { kind: 'failed'; reason: string }
  | { kind: 'timed_out'; afterMs: number };

/** Turns recordings into text; see the module comment for the contract. */
export interface Transcriber {
  /** Transcribes `file`; `signal` abandons it early (the gateway stopping), reported as `failed`. */
  transcribe(file: VoiceFile, signal?: AbortSignal): Promise<Transcription>;
}

/**
 * What a backend is given: the file, and a signal that aborts when the deadline passes or the caller quits.
 */
export type Backend = (file: VoiceFile, signal: AbortSignal) => Promise<Transcription>;
