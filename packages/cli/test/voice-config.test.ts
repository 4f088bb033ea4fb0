/**
 * The `voice:` block: both forms accepted and mapped onto the gateway's `VoiceOptions`, the key read
 * from each of the bot token's forms and never shown, and each mistake refused with what to change.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig } from '../src/config.js';
import { checkAgentResources } from '../src/config-check.js';
import { ConfigError } from '../src/config-error.js';
import { describeConfig } from '../src/masked-config.js';
import { voiceOptions } from '../src/voice-config.js';

const env = { env: {}, cwd: '/srv' };
const yaml = (voice: string) =>
  `agents:\n  - name: demo\n    allow: [1]\n    workDir: /w\n    voice: ${voice}\n`;

function agentOf(voice: string) {
  const agent = parseConfig(yaml(voice), '/etc/switchyard/switchyard.yaml', env).agents[0];
  if (!agent) throw new Error('no agent');
  return agent;
}

function problems(voice: string): string[] {
  try {
    parseConfig(yaml(voice), '/etc/switchyard/switchyard.yaml', env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('config was accepted');
}

describe('the voice block', () => {
  it('maps the OpenAI-compatible form onto the gateway options, seconds to milliseconds', () => {
    const agent = agentOf(
      '{ url: "https://api.groq.com/openai/v1", model: whisper-large-v3, key: { env: GROQ_KEY }, language: en, maxSeconds: 120, timeoutSeconds: 30 }',
    );
    expect(voiceOptions(agent.voice, { GROQ_KEY: ' gsk-123 \n' })).toEqual({
      ok: true,
      options: {
        url: 'https://api.groq.com/openai/v1',
        model: 'whisper-large-v3',
        key: 'gsk-123',
        language: 'en',
        maxSeconds: 120,
        timeoutMs: 30_000,
      },
    });
    expect(voiceOptions(agentOf('{ url: "http://127.0.0.1:8080/v1", model: base }').voice, {})).toEqual({
      ok: true,
      options: { url: 'http://127.0.0.1:8080/v1', model: 'base' },
    });
  });

  it('maps the command form, and no block at all to no transcriber', () => {
    const agent = agentOf('{ command: [whisper-cli, -m, /opt/ggml-base.bin, -nt, -f, "{file}"] }');
    expect(voiceOptions(agent.voice, {})).toEqual({
      ok: true,
      options: { command: ['whisper-cli', '-m', '/opt/ggml-base.bin', '-nt', '-f', '{file}'] },
    });
    const none = parseConfig('agents:\n  - { name: a, allow: [1], workDir: /w }\n', '/etc/s.yaml', env)
      .agents[0];
    expect(voiceOptions(none?.voice, {})).toEqual({ ok: true, options: undefined });
  });

  it('reads the key from a file (relative to the config) or a credential, and names a missing one without a key', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'voice-key-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'openai.key'), 'sk-from-file\nsecond line\n');
    const agent = parseConfig(
      yaml('{ url: "https://api.openai.com/v1", model: whisper-1, key: { file: openai.key } }'),
      path.join(dir, 's.yaml'),
      env,
    ).agents[0];
    expect(voiceOptions(agent?.voice, {})).toMatchObject({ ok: true, options: { key: 'sk-from-file' } });
    const credential = agentOf(
      '{ url: "https://api.openai.com/v1", model: whisper-1, key: { credential: openai } }',
    );
    expect(voiceOptions(credential.voice, { CREDENTIALS_DIRECTORY: dir })).toMatchObject({ ok: false });
    writeFileSync(path.join(dir, 'openai'), 'sk-cred\n');
    expect(voiceOptions(credential.voice, { CREDENTIALS_DIRECTORY: dir })).toMatchObject({
      ok: true,
      options: { key: 'sk-cred' },
    });
    expect(voiceOptions(credential.voice, {})).toEqual({
      ok: false,
      problem: expect.stringContaining('needs $CREDENTIALS_DIRECTORY'),
    });
    const missing = agentOf(
      '{ url: "https://api.openai.com/v1", model: whisper-1, key: { env: OPENAI_API_KEY } }',
    );
    expect(voiceOptions(missing.voice, {})).toEqual({
      ok: false,
      problem: 'environment variable OPENAI_API_KEY is empty or missing',
    });
  });

  it('never shows an inline key in config check', () => {
    const config = parseConfig(
      yaml('{ url: "https://api.openai.com/v1", model: whisper-1, key: sk-inline-secret }'),
      '/etc/s.yaml',
      env,
    );
    const shown = describeConfig(config);
    expect(shown).not.toContain('sk-inline-secret');
    expect(shown).toContain('"key": "***"');
  });

  it('refuses each mistake with where it is and what to change', () => {
    expect(problems('{ model: whisper-1 }')).toEqual([
      'agents[0].voice.url: is missing: give url (and model) of an OpenAI-compatible server, or command: [program, …, "{file}"]',
    ]);
    expect(problems('{ url: "https://api.openai.com/v1" }')).toEqual([
      'agents[0].voice.model: is missing: name the model the server transcribes with, like whisper-1',
    ]);
    expect(problems('{ url: not-a-url, model: m }')).toEqual([
      "agents[0].voice.url: expected the server's base URL, like https://api.openai.com/v1 or http://127.0.0.1:8080/v1",
    ]);
    expect(problems('{ command: [whisper-cli, -f, "{file}"], url: "http://127.0.0.1:1/v1" }')).toEqual([
      'agents[0].voice.url: is a setting of the url form, and this block uses command: keep one of the two forms',
    ]);
    expect(problems('{ command: [whisper-cli, -f] }')).toEqual([
      'agents[0].voice.command: no argument holds "{file}": add it where the program expects the recording\'s path',
    ]);
    expect(problems('{ command: [] }')).toEqual([
      'agents[0].voice.command: list the program and its arguments, like [whisper-cli, -f, "{file}"]',
    ]);
    expect(problems('{ url: "https://api.openai.com/v1", model: m, language: English }')).toEqual([
      'agents[0].voice.language: expected a language code like en or de (ISO 639-1)',
    ]);
    expect(problems('{ url: "https://api.openai.com/v1", model: m, maxSeconds: 0 }')[0]).toMatch(
      /^agents\[0\]\.voice\.maxSeconds: must be more than 0/,
    );
    expect(problems('{ url: "https://api.openai.com/v1", model: m, timeout: 5 }')[0]).toMatch(
      /^agents\[0\]\.voice: unknown setting "timeout"/,
    );
    expect(problems('{ url: "https://api.openai.com/v1", model: m, key: { vault: x } }')).toEqual([
      'agents[0].voice.key: expected the key as text, { file: PATH }, { env: VARIABLE } or { credential: NAME }',
    ]);
  });

  it('refuses a key sent over plain http:// beyond this machine, and says what to do', () => {
    expect(problems('{ url: "http://stt.example.com:8080/v1", model: m, key: { env: K } }')).toEqual([
      'agents[0].voice.url: is plain http:// to stt.example.com, and a key is set: the key and every recording would cross the network unencrypted — use https://, or a server on 127.0.0.1 (or localhost, ::1), or remove key: for a server that needs none',
    ]);
    expect(problems('{ url: "http://10.0.0.7/v1", model: m, key: sk-x }')[0]).toMatch(
      /plain http:\/\/ to 10\.0\.0\.7/,
    );
    // Loopback, https, or no key: taken.
    for (const ok of [
      '{ url: "http://127.0.0.1:8080/v1", model: m, key: { env: K } }',
      '{ url: "http://localhost:8080/v1", model: m, key: { env: K } }',
      '{ url: "http://[::1]:8080/v1", model: m, key: { env: K } }',
      '{ url: "https://stt.example.com/v1", model: m, key: { env: K } }',
      '{ url: "http://stt.example.com:8080/v1", model: m }',
    ])
      expect(agentOf(ok).voice?.kind, ok).toBe('http');
  });

  it('config check says whether the key is readable and the recognizer is there, never showing the key', () => {
    const findings = (voice: string, environment: Record<string, string | undefined> = {}) =>
      checkAgentResources(agentOf(voice), 0, '/etc/switchyard/switchyard.yaml', {
        env: environment,
        cwd: '/srv',
      })
        .filter((f) => f.path.startsWith('agents[0].voice'))
        .map(({ level, path: at, message }) => ({ level, at, message }));
    const http = '{ url: "https://api.openai.com/v1", model: whisper-1, key: { env: OPENAI_API_KEY } }';
    expect(findings(http)).toEqual([
      {
        level: 'error',
        at: 'agents[0].voice.key',
        message: 'environment variable OPENAI_API_KEY is empty or missing',
      },
    ]);
    expect(findings(http, { OPENAI_API_KEY: 'sk-secret-123' })).toEqual([
      {
        level: 'ok',
        at: 'agents[0].voice',
        message: 'voice messages are transcribed by https://api.openai.com/v1 (model whisper-1)',
      },
    ]);
    expect(findings('{ command: [no-such-recognizer-xyz, "{file}"] }', { PATH: '/usr/bin' })[0]?.level).toBe(
      'error',
    );
    expect(findings(`{ command: [${JSON.stringify(process.execPath)}, "{file}"] }`)[0]).toEqual({
      level: 'ok',
      at: 'agents[0].voice.command',
      message: `voice messages are transcribed by ${process.execPath}`,
    });
  });
});
