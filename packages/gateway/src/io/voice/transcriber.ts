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
import { type Clock, createWakeTimer, systemClock } from '@switchyard/protocol';
import { transcribeByCommand } from './command-transcriber.js';
import { transcribeByHttp } from './openai-transcriber.js';
import {
  type Backend,
  DEFAULT_VOICE_MAX_SECONDS,
  DEFAULT_VOICE_TIMEOUT_MS,
  type Transcriber,
  type Transcription,
  type VoiceOptions,
} from './voice-types.js';

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
  // One abort, two causes: the deadline (on the clock's one wake timer) or the gateway stopping.
  const timedOut = new Error('timed out');
  const timeout = createWakeTimer(clock, () => controller.abort(timedOut));
  const ended = new Promise<Transcription>((resolve) => {
    controller.signal.addEventListener(
      'abort',
      () => {
        if (controller.signal.reason === timedOut) resolve({ kind: 'timed_out', afterMs: ms });
        else if (outer?.aborted) resolve({ kind: 'failed', reason: 'the gateway is stopping' });
      },
      { once: true },
    );
  });
  timeout.arm(clock.now() + ms);
  try {
    return await Promise.race([
      work(controller.signal).catch(
        (error: unknown): Transcription => ({ kind: 'failed', reason: `unexpected error: ${String(error)}` }),
      ),
      ended,
    ]);
  } finally {
    timeout.stop();
    outer?.removeEventListener('abort', onOuter);
    controller.abort(new Error('done'));
  }
}
