/**
 * Claude's environment is an allowlist plus `claude.env`: the service's own secrets (the bot token's
 * variable, systemd's credentials directory, anything else unlisted) never reach it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readToken } from '../src/bot-token.js';
import { bridgeEnvironment, claudeEnvironment } from '../src/claude-env.js';
import { parseConfig } from '../src/config.js';

const TOKEN = '123456:AAH-abcdefghijklmnopqrstuvwxyz';

function agentWith(token: string, claudeEnv = '{}') {
  const config = parseConfig(
    `agents:\n  - name: demo\n    token: ${token}\n    allow: [1]\n    workDir: /srv/demo\n    claude: { env: ${claudeEnv} }\n`,
    '/etc/switchyard/switchyard.yaml',
    { env: {}, cwd: '/' },
  );
  const agent = config.agents[0];
  if (!agent) throw new Error('no agent');
  return agent;
}

describe('claude environment', () => {
  const service = {
    PATH: '/usr/bin:/bin',
    HOME: '/var/lib/switchyard/demo/agent',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'dumb',
    ANTHROPIC_API_KEY: 'sk-ant-api03-key',
    CLAUDE_CONFIG_DIR: '/var/lib/claude',
    // Everything below must stay out.
    DEMO_BOT_TOKEN: TOKEN,
    CREDENTIALS_DIRECTORY: '/run/credentials/switchyard-gateway@demo.service',
    SWITCHYARD_CONFIG: '/etc/switchyard/switchyard.yaml',
    AWS_SECRET_ACCESS_KEY: 'aws-secret',
    INVOCATION_ID: 'abc',
  };

  it('passes the allowlist and claude.env, and nothing else', () => {
    const agent = agentWith('{ env: DEMO_BOT_TOKEN }', '{ DISABLE_AUTOUPDATER: "1", PATH: /opt/bin }');
    expect(claudeEnvironment(agent, service)).toEqual({
      PATH: '/opt/bin',
      HOME: '/var/lib/switchyard/demo/agent',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'dumb',
      ANTHROPIC_API_KEY: 'sk-ant-api03-key',
      CLAUDE_CONFIG_DIR: '/var/lib/claude',
      DISABLE_AUTOUPDATER: '1',
    });
  });

  it('leaves out the token variable even when its name is allowlisted', () => {
    const agent = agentWith('{ env: CLAUDE_BOT_TOKEN }');
    const env = claudeEnvironment(agent, { ...service, CLAUDE_BOT_TOKEN: TOKEN });
    expect(Object.values(env)).not.toContain(TOKEN);
    expect(env.CLAUDE_CONFIG_DIR).toBe('/var/lib/claude');
  });

  it('gives the bridge process the service environment without the token or the credentials', () => {
    const agent = agentWith('{ env: DEMO_BOT_TOKEN }');
    const env = bridgeEnvironment(agent, service);
    expect(env.DEMO_BOT_TOKEN).toBeUndefined();
    expect(env.CREDENTIALS_DIRECTORY).toBeUndefined();
    expect(env.SWITCHYARD_CONFIG).toBe('/etc/switchyard/switchyard.yaml');
  });
});

describe('every secret kept from the bridge and Claude (issue 27)', () => {
  it('the bridge and its Claude get neither the token, a webhook secret nor the voice key', () => {
    const config = parseConfig(
      'agents:\n  - name: demo\n    token: { env: DEMO_BOT_TOKEN }\n    allow: [1]\n    workDir: /srv/demo\n' +
        '    voice: { url: "https://api.openai.com/v1", model: whisper-1, key: { env: CLAUDE_VOICE_KEY } }\n' +
        '    webhooks:\n      listen: { port: 8790 }\n      hooks:\n' +
        '        - { name: github, kind: github, secret: { env: GITHUB_WEBHOOK_SECRET }, chat: 1, events: [push] }\n',
      '/etc/switchyard/switchyard.yaml',
      { env: {}, cwd: '/' },
    );
    const agent = config.agents[0];
    if (!agent) throw new Error('no agent');
    const service = {
      PATH: '/usr/bin',
      DEMO_BOT_TOKEN: TOKEN,
      GITHUB_WEBHOOK_SECRET: 'whsec-hunter2',
      // A name Claude's allowlist passes (`CLAUDE_*`): still the gateway's alone.
      CLAUDE_VOICE_KEY: 'sk-voice-hunter2',
      CREDENTIALS_DIRECTORY: '/run/credentials/x',
    };
    const secrets = [TOKEN, 'whsec-hunter2', 'sk-voice-hunter2'];
    const bridge = bridgeEnvironment(agent, service);
    const claude = claudeEnvironment(agent, bridge);
    for (const env of [bridge, claude, claudeEnvironment(agent, service)])
      expect(Object.values(env).filter((v) => v !== undefined && secrets.includes(v))).toEqual([]);
    expect(bridge.PATH).toBe('/usr/bin');
  });
});

describe('token from a systemd credential', () => {
  it('reads $CREDENTIALS_DIRECTORY/NAME, and says what to do without it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-cred-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'demo.token'), `${TOKEN}\n`);
    const agent = agentWith('{ credential: demo.token }');
    expect(agent.token).toEqual({ kind: 'credential', name: 'demo.token' });
    expect(readToken(agent, { env: { CREDENTIALS_DIRECTORY: dir }, cwd: '/' }, 'f.yaml')).toBe(TOKEN);
    expect(() => readToken(agent, { env: {}, cwd: '/' }, 'f.yaml')).toThrow(/needs \$CREDENTIALS_DIRECTORY/);
  });
});
