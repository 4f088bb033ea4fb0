import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { secretFindings, unitSecretProblems } from '../src/secret-exposure.js';

const UNIT = {
  INVOCATION_ID: '0123456789abcdef0123456789abcdef',
  STATE_DIRECTORY: '/var/lib/switchyard/demo/bridge',
};

function agentOf(agentYaml: string) {
  const file = path.join('/etc/switchyard', 'switchyard.yaml');
  const config = parseConfig(
    `agents:\n  - name: demo\n    allow: [1]\n    workDir: /srv/agents/demo\n${agentYaml}`,
    file,
    {
      env: {},
      cwd: '/',
    },
  );
  const [agent] = config.agents;
  if (!agent) throw new Error('no agent');
  return agent;
}

describe('secrets the agent unit refuses, since every agent user reads the config', () => {
  it('refuses an inline token under systemd and says where to put it', () => {
    const agent = agentOf('    token: "123456:AAH-abcdefghijklmnopqrstuvwxyz"\n');
    const [problem, ...rest] = unitSecretProblems(agent, UNIT);
    expect(rest).toEqual([]);
    expect(problem).toMatch(/inline token.*every agent's Claude/);
    expect(problem).toContain('/etc/switchyard/credentials/demo.token');
    // The message never carries the token itself.
    expect(problem).not.toContain('AAH-');
  });

  it("refuses secret-looking claude.env entries, Claude's own API key included", () => {
    const agent = agentOf(
      '    token: { credential: telegram-token }\n    claude:\n      env:\n' +
        '        ANTHROPIC_API_KEY: sk-ant-x\n        GITHUB_TOKEN: ghp_x\n        DB_PASSWORD: p\n' +
        '        AWS_SECRET_ACCESS_KEY: s\n        EDITOR: vi\n',
    );
    const [problem, ...rest] = unitSecretProblems(agent, UNIT);
    expect(rest).toEqual([]);
    expect(problem).toContain('ANTHROPIC_API_KEY, GITHUB_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY');
    expect(problem).not.toContain('EDITOR');
    expect(problem).not.toContain('ghp_x');
  });

  it('refuses an inline voice.key under systemd, as the other inline secrets (issue 27)', () => {
    const agent = agentOf(
      '    token: { credential: telegram-token }\n' +
        '    voice: { url: "https://api.openai.com/v1", model: whisper-1, key: sk-voice-hunter2 }\n',
    );
    const [problem, ...rest] = unitSecretProblems(agent, UNIT);
    expect(rest).toEqual([]);
    expect(problem).toMatch(/inline voice\.key is readable by every agent's Claude/);
    expect(problem).toContain('credential');
    expect(problem).not.toContain('hunter2');
    // From a credential it is fine.
    const kept = agentOf(
      '    token: { credential: telegram-token }\n' +
        '    voice: { url: "https://api.openai.com/v1", model: whisper-1, key: { credential: voice-key } }\n',
    );
    expect(unitSecretProblems(kept, UNIT)).toEqual([]);
  });

  it('refuses an inline webhook secret under systemd, naming the hook and never the secret', () => {
    const agent = agentOf(
      '    token: { credential: telegram-token }\n    webhooks:\n      listen: { port: 8790 }\n      hooks:\n' +
        '        - { name: github, kind: github, secret: hunter2, chat: 1, events: [push] }\n' +
        '        - { name: alerts, kind: generic, secret: { credential: alerts }, chat: 1 }\n',
    );
    const [problem, ...rest] = unitSecretProblems(agent, UNIT);
    expect(rest).toEqual([]);
    expect(problem).toMatch(/inline secret of webhook github is readable by every agent's Claude/);
    expect(problem).not.toContain('hunter2');
  });

  it('refuses nothing outside systemd, where one user runs everything anyway', () => {
    const inTerminal = { INVOCATION_ID: '0123456789abcdef0123456789abcdef' };
    const agent = agentOf(
      '    token: "123456:AAH-abcdefghijklmnopqrstuvwxyz"\n    claude:\n      env: { GITHUB_TOKEN: x }\n',
    );
    expect(unitSecretProblems(agent, {})).toEqual([]);
    // A desktop terminal (a user service) passes INVOCATION_ID on to its shells: not a unit of ours.
    expect(unitSecretProblems(agent, inTerminal)).toEqual([]);
  });
});

describe('what config check and doctor say about who can read the token', () => {
  it('warns outside systemd that Claude can read the bot token', () => {
    const agent = agentOf('    token: { file: demo.token }\n');
    expect(secretFindings(agent, 0, {})).toEqual([
      expect.objectContaining({
        level: 'warn',
        path: 'agents[0].token',
        message: expect.stringMatching(/Claude .*can read the bot token/),
      }),
    ]);
  });

  it('for a unit deployment (a credential token): errors for what the units refuse', () => {
    const agent = agentOf(
      '    token: { credential: telegram-token }\n    claude:\n      env: { ANTHROPIC_API_KEY: k, SLACK_SECRET: s }\n',
    );
    const findings = secretFindings(agent, 0, {});
    expect(findings.map((f) => f.level)).toEqual(['error']);
    expect(findings[0]?.message).toContain('ANTHROPIC_API_KEY, SLACK_SECRET');
  });
});
