/**
 * Speech to text for the voice notes (and audio files, video notes) users send: one small interface,
 * {@link Transcriber}, over two backends chosen by the config —
 * - an OpenAI-compatible server (`openai-transcriber.ts`: OpenAI, Groq, whisper.cpp's server,
 *   faster-whisper servers), `POST {url}/audio/transcriptions`;
 * - a local program (`command-transcriber.ts`) given the file's path, whose stdout is the text.
 *
 * Contract: `transcribe` never throws and never outlives its deadline. Every expected outcome — the
 * text, no transcriber configured, a note over the duration cap, a failure with its reason, the
 * deadline passed — is a member of {@link Transcription}; the caller decides what each means for the
 * chat. The deadline is armed on the injected {@link Clock}; when it passes, the backend's work is
 * aborted (the request cancelled, the program killed) and `timed_out` is returned at once, whether or
 * not the backend has let go yet. A reason never contains the key.
 */
import { type Clock, systemClock } from '@switchyard/protocol';
import { transcribeByCommand } from './command-transcriber.js';
import { transcribeByHttp } from './openai-transcriber.js';

/** Settings both backends share. */
interface VoiceLimits {
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
  /** Its length in seconds, as Telegram reports it. */
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

/** What a backend is given: the file, and a signal that aborts when the deadline passes or the caller quits. */
export type Backend = (file: VoiceFile, signal: AbortSignal) => Promise<Transcription>;

/** What the transcriber runs on. */
export interface TranscriberDeps {
  /** Arms the deadline; default {@link systemClock}. */
  clock?: Clock;
  /** The platform's fetch (tests may wrap it); default the global one. */
  fetch?: typeof fetch;
}

/** The transcriber for `options`; with none it answers every note `unconfigured`. */
export function createTranscriber(
  options: VoiceOptions | undefined,
  deps: TranscriberDeps = {},
): Transcriber {
  if (options === undefined) return { transcribe: async () => ({ kind: 'unconfigured' }) };
  const clock = deps.clock ?? systemClock;
  const maxSeconds = options.maxSeconds ?? DEFAULT_VOICE_MAX_SECONDS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_VOICE_TIMEOUT_MS;
  const backend: Backend =
    'command' in options
      ? (file, signal) => transcribeByCommand(options.command, file, signal)
      : (file, signal) => transcribeByHttp(options, file, signal, deps.fetch ?? fetch);
  return {
    async transcribe(file, signal) {
      if (file.durationSeconds > maxSeconds) {
        return { kind: 'too_long', seconds: file.durationSeconds, maxSeconds };
      }
      if (signal?.aborted) return { kind: 'failed', reason: 'the gateway is stopping' };
      return withDeadline(clock, timeoutMs, signal, (inner) => backend(file, inner));
    },
  };
}

/**
 * Runs `work` with a signal that aborts after `ms` on `clock` (or when `outer` does), and resolves at
 * the deadline with `timed_out` even if the work has not finished letting go.
 */
async function withDeadline(
  clock: Clock,
  ms: number,
  outer: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<Transcription>,
): Promise<Transcription> {
  const controller = new AbortController();
  const onOuter = (): void => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onOuter, { once: true });
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  const deadline = new Promise<Transcription>((resolve) => {
    timer = clock.setTimeout(() => {
      controller.abort(new Error('timed out'));
      resolve({ kind: 'timed_out', afterMs: ms });
    }, ms);
  });
  const stopped = new Promise<Transcription>((resolve) => {
    controller.signal.addEventListener(
      'abort',
      () => {
        if (outer?.aborted) resolve({ kind: 'failed', reason: 'the gateway is stopping' });
      },
      { once: true },
    );
  });
  try {
    return await Promise.race([
      work(controller.signal).catch(
        (error: unknown): Transcription => ({ kind: 'failed', reason: `unexpected error: ${String(error)}` }),
      ),
      deadline,
      stopped,
    ]);
  } finally {
    clock.clearTimeout(timer);
    outer?.removeEventListener('abort', onOuter);
    controller.abort(new Error('done'));
  }
}
