/**
 * The OpenAI-compatible backend: the recording uploaded as `multipart/form-data` (`file`, `model`,
 * `language` when set, `response_format=json`) to `POST {url}/audio/transcriptions`, through the
 * platform's `fetch` and `FormData`, and `{ "text": … }` read back. OpenAI, Groq, whisper.cpp's
 * `whisper-server` and the faster-whisper servers all speak it.
 *
 * Every failure is a reason a person can act on (the server unreachable, the key refused, an HTTP
 * error with the server's own message); the key is sent only as the `Authorization` header and never
 * appears in a reason, and never over plain `http://` to a host beyond loopback (the config refuses such
 * a block; this refuses it again for options built elsewhere).
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { HttpVoiceOptions, Transcription, VoiceFile } from './voice-types.js';

/** Hosts a key may be sent to over plain `http://`: this machine's (127.0.0.0/8, ::1, localhost). */
const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/;

/** How much of a server's error message a reason carries. */
const REASON_CHARS = 300;

/** Transcribes `file` with the server `options` names; see the module comment. */
export async function transcribeByHttp(
  options: HttpVoiceOptions,
  file: VoiceFile,
  signal: AbortSignal,
  fetchFn: typeof fetch,
): Promise<Transcription> {
  const url = URL.parse(options.url);
  if (options.key !== undefined && url?.protocol === 'http:' && !LOOPBACK_HOST.test(url.hostname)) {
    return {
      kind: 'failed',
      reason: `the transcriber's URL is plain http:// to ${url.hostname}: the key is not sent unencrypted (use https://)`,
    };
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file.path);
  } catch (error) {
    return { kind: 'failed', reason: `the recording could not be read (${codeOf(error) ?? String(error)})` };
  }
  const form = new FormData();
  form.append(
    'file',
    new Blob([new Uint8Array(bytes)], { type: file.mime ?? 'audio/ogg' }),
    basename(file.path),
  );
  form.append('model', options.model);
  if (options.language !== undefined) form.append('language', options.language);
  form.append('response_format', 'json');
  const endpoint = `${options.url.replace(/\/+$/, '')}/audio/transcriptions`;
  let response: Response;
  try {
    response = await fetchFn(endpoint, {
      method: 'POST',
      body: form,
      signal,
      ...(options.key !== undefined ? { headers: { authorization: `Bearer ${options.key}` } } : {}),
    });
  } catch (error) {
    if (signal.aborted) return { kind: 'failed', reason: 'the request was cancelled' };
    const code = codeOf(error);
    return {
      kind: 'failed',
      reason: `cannot reach the transcriber at ${options.url}${code ? ` (${code})` : ''}`,
    };
  }
  let body: string;
  try {
    body = await response.text();
  } catch {
    return { kind: 'failed', reason: `the transcriber's answer was cut off (HTTP ${response.status})` };
  }
  if (!response.ok) {
    const message = serverMessage(body);
    const hint = response.status === 401 || response.status === 403 ? ': check voice.key in the config' : '';
    return {
      kind: 'failed',
      reason: `the transcriber answered HTTP ${response.status}${message ? ` (${message})` : ''}${hint}`,
    };
  }
  const text = textOf(body);
  if (text === undefined) return { kind: 'failed', reason: 'the transcriber answered without a text' };
  if (text === '') return { kind: 'failed', reason: 'no speech was recognised in it' };
  return { kind: 'text', text };
}

/** The `text` of a JSON answer (trimmed), or undefined when it has none. */
function textOf(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && 'text' in parsed && typeof parsed.text === 'string') {
      return parsed.text.trim();
    }
  } catch {
    // Not JSON: no text.
  }
  return undefined;
}

/** An error answer's message (`{ error: { message } }`, `{ error: "…" }` or plain text), shortened. */
function serverMessage(body: string): string {
  let message = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const found =
      typeof parsed.error === 'string'
        ? parsed.error
        : typeof parsed.error?.message === 'string'
          ? parsed.error.message
          : typeof parsed.message === 'string'
            ? parsed.message
            : undefined;
    if (found !== undefined) message = found;
  } catch {
    // Plain text: keep it.
  }
  const flat = message.replace(/\s+/g, ' ').trim();
  return flat.length > REASON_CHARS ? `${flat.slice(0, REASON_CHARS)}…` : flat;
}

/** A system error's code (`ECONNREFUSED`), looking through fetch's `cause`. */
function codeOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
