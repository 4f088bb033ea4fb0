/**
 * An agent's `voice:` block: how the gateway transcribes the voice notes (and audio files, video notes)
 * users send. Two forms, one of them:
 *
 * ```yaml
 * voice:
 *   url: https://api.openai.com/v1    # any OpenAI-compatible server: POST {url}/audio/transcriptions
 *   model: whisper-1
 *   key: { env: OPENAI_API_KEY }      # the bot token's forms; optional for a local server
 *   language: en                      # optional hint
 *   maxSeconds: 300                   # longer notes are not transcribed (default 300)
 *   timeoutSeconds: 120               # one transcription's deadline (default 120)
 * # or a local program given the file's path; its stdout is the text:
 * voice: { command: [whisper-cli, -m, /opt/models/ggml-base.bin, -nt, -f, "{file}"] }
 * ```
 *
 * Validated here with messages that say what to change; resolved to {@link VoiceConfig} (the key still a
 * source), and read into the gateway's `VoiceOptions` by {@link voiceOptions} when the gateway starts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { VoiceOptions } from '@switchyard/gateway';
import { z } from 'zod';

/** A host name that stays on this machine: 127.0.0.0/8, ::1 (bracketed in a URL) or localhost. */
export const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/;

/** A secret's source, in the bot token's forms: inline, `{ file }`, `{ env }` or `{ credential }`. */
export const keySource = z.union(
  [
    z.string().min(1, { error: 'is empty: write the key, or remove the line for a server that needs none' }),
    z.strictObject({ file: z.string().min(1) }),
    z.strictObject({
      env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, { error: 'expected an environment variable name' }),
    }),
    z.strictObject({
      credential: z.string().regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected a systemd credential name' }),
    }),
  ],
  { error: 'expected the key as text, { file: PATH }, { env: VARIABLE } or { credential: NAME }' },
);

/** The `voice:` block as written; which form it is, is checked by the refinement below. */
export const voiceSchema = z
  .strictObject({
    url: z
      .url({
        error: "expected the server's base URL, like https://api.openai.com/v1 or http://127.0.0.1:8080/v1",
      })
      .optional(),
    model: z.string().min(1).optional(),
    key: keySource.optional(),
    language: z
      .string()
      .regex(/^[a-z]{2,3}$/, { error: 'expected a language code like en or de (ISO 639-1)' })
      .optional(),
    command: z
      .array(z.string().min(1, { error: 'must not be empty text' }))
      .min(1, { error: 'list the program and its arguments, like [whisper-cli, -f, "{file}"]' })
      .optional(),
    maxSeconds: z.number().int().positive().optional(),
    timeoutSeconds: z.number().positive().optional(),
  })
  .superRefine((voice, ctx) => {
    const problem = (where: string, message: string): void => {
      ctx.addIssue({ code: 'custom', path: [where], message });
    };
    if (voice.command !== undefined) {
      for (const key of ['url', 'model', 'key', 'language'] as const) {
        if (voice[key] !== undefined) {
          problem(
            key,
            'is a setting of the url form, and this block uses command: keep one of the two forms',
          );
        }
      }
      if (voice.command.length > 0 && !voice.command.some((arg, i) => i > 0 && arg.includes('{file}'))) {
        problem(
          'command',
          'no argument holds "{file}": add it where the program expects the recording\'s path',
        );
      }
      return;
    }
    if (voice.url === undefined) {
      problem(
        'url',
        'is missing: give url (and model) of an OpenAI-compatible server, or command: [program, …, "{file}"]',
      );
    } else if (voice.model === undefined) {
      problem('model', 'is missing: name the model the server transcribes with, like whisper-1');
    }
    const url = voice.url === undefined ? undefined : URL.parse(voice.url);
    if (url?.protocol === 'http:' && voice.key !== undefined && !LOOPBACK.test(url.hostname)) {
      problem(
        'url',
        `is plain http:// to ${url.hostname}, and a key is set: the key and every recording would cross the network unencrypted — use https://, or a server on 127.0.0.1 (or localhost, ::1), or remove key: for a server that needs none`,
      );
    }
  });

/** Where a key comes from, resolved (paths absolute); the key itself is read only at start. */
export type VoiceKeySource =
  | { kind: 'inline'; value: string }
  | { kind: 'file'; path: string }
  | { kind: 'env'; name: string }
  | { kind: 'credential'; name: string };

/** One agent's `voice:` block, resolved, or undefined when it has none (notes go to Claude as files). */
export type VoiceConfig =
  | {
      kind: 'http';
      url: string;
      model: string;
      key: VoiceKeySource | undefined;
      language: string | undefined;
      maxSeconds: number | undefined;
      timeoutMs: number | undefined;
    }
  | {
      kind: 'command';
      command: [string, ...string[]];
      maxSeconds: number | undefined;
      timeoutMs: number | undefined;
    };

/** Resolves a validated `voice:` block; relative key files are taken from `base` (the config's directory). */
export function resolveVoice(
  raw: z.infer<typeof voiceSchema> | undefined,
  base: string,
): VoiceConfig | undefined {
  if (raw === undefined) return undefined;
  const limits = {
    maxSeconds: raw.maxSeconds,
    timeoutMs: raw.timeoutSeconds === undefined ? undefined : Math.round(raw.timeoutSeconds * 1000),
  };
  const [program, ...args] = raw.command ?? [];
  if (program !== undefined) return { kind: 'command', command: [program, ...args], ...limits };
  const key = raw.key;
  return {
    kind: 'http',
    url: raw.url ?? '',
    model: raw.model ?? '',
    key:
      key === undefined
        ? undefined
        : typeof key === 'string'
          ? { kind: 'inline', value: key }
          : 'file' in key
            ? { kind: 'file', path: path.resolve(base, key.file) }
            : 'env' in key
              ? { kind: 'env', name: key.env }
              : { kind: 'credential', name: key.credential },
    language: raw.language,
    ...limits,
  };
}

/**
 * The gateway's voice options, with the key read from its source; a problem names the source, never
 * the key.
 */
export function voiceOptions(
  voice: VoiceConfig | undefined,
  env: Record<string, string | undefined>,
): { ok: true; options: VoiceOptions | undefined } | { ok: false; problem: string } {
  if (voice === undefined) return { ok: true, options: undefined };
  const limits = {
    ...(voice.maxSeconds !== undefined ? { maxSeconds: voice.maxSeconds } : {}),
    ...(voice.timeoutMs !== undefined ? { timeoutMs: voice.timeoutMs } : {}),
  };
  if (voice.kind === 'command') return { ok: true, options: { command: voice.command, ...limits } };
  const key = readKey(voice.key, env);
  if (!key.ok) return key;
  return {
    ok: true,
    options: {
      url: voice.url,
      model: voice.model,
      ...(key.value !== undefined ? { key: key.value } : {}),
      ...(voice.language !== undefined ? { language: voice.language } : {}),
      ...limits,
    },
  };
}

/** Reads a secret from its source; a problem names the source, never the secret. */
export function readKey(
  source: VoiceKeySource | undefined,
  env: Record<string, string | undefined>,
): { ok: true; value: string | undefined } | { ok: false; problem: string } {
  if (source === undefined) return { ok: true, value: undefined };
  const present = (value: string | undefined, where: string) => {
    const key = value?.trim();
    return key
      ? { ok: true as const, value: key }
      : { ok: false as const, problem: `${where} is empty or missing` };
  };
  switch (source.kind) {
    case 'inline':
      return { ok: true, value: source.value };
    case 'env':
      return present(env[source.name], `environment variable ${source.name}`);
    case 'file':
    case 'credential': {
      const directory = env.CREDENTIALS_DIRECTORY;
      if (source.kind === 'credential' && !directory) {
        return {
          ok: false,
          problem: `credential ${source.name} needs $CREDENTIALS_DIRECTORY: run the gateway under its systemd unit (LoadCredential=${source.name}:…)`,
        };
      }
      const keyPath = source.kind === 'file' ? source.path : path.join(directory ?? '', source.name);
      try {
        return present(readFileSync(keyPath, 'utf8').split('\n')[0], `file ${keyPath}`);
      } catch (err) {
        return {
          ok: false,
          problem: `cannot read ${keyPath} (${(err as NodeJS.ErrnoException).code ?? err})`,
        };
      }
    }
  }
}

/** The block as `config check` shows it: an inline key masked, a source named. */
export function describeVoice(voice: VoiceConfig | undefined): unknown {
  if (voice === undefined) return '(none: voice notes reach the agent as files)';
  if (voice.kind === 'command') return voice;
  const key = voice.key;
  return {
    ...voice,
    key:
      key === undefined
        ? '(none)'
        : key.kind === 'inline'
          ? '***'
          : key.kind === 'file'
            ? `(from file ${key.path})`
            : key.kind === 'env'
              ? `(from environment variable ${key.name})`
              : `(from systemd credential ${key.name})`,
  };
}
