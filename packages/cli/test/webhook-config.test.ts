/**
 * The `webhooks:`, `budget:` and `timezone:` keys: resolved with secrets still sources and read at
 * start; a receiver bound beyond loopback without `public: true`, an unknown zone, a budget of nothing
 * a generic hook with events and a GitHub hook without them are refused with what to change.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { checkConfigResources } from '../src/config-check.js';
import { describeConfig } from '../src/masked-config.js';
import { webhookOptions } from '../src/webhook-config.js';
import { configProblems } from './config-problems.js';

const env = { env: {}, cwd: '/srv' };
const FILE = '/etc/switchyard/switchyard.yaml';

const agent = (extra: string) =>
  `agents:\n  - name: demo\n    allow: [1001]\n    workDir: ./work\n${extra.replace(/^/gm, '    ')}\n`;

const HOOKS = `webhooks:
  listen: { port: 8790 }
  hooks:
    - name: github
      kind: github
      secret: { env: GITHUB_WEBHOOK_SECRET }
      chat: -1001234567890
      topic: 42
      events: [workflow_run, pull_request]
    - name: alerts
      kind: generic
      secret: { file: alerts.secret }
      chat: 123456789
      rate: { perMinute: 5, burst: 2 }`;

describe('webhooks, budget and timezone config', () => {
  it('resolves the receiver on 127.0.0.1, the budget and the zone; secrets are read only at start', () => {
    const config = parseConfig(
      agent(`timezone: Europe/Berlin\nbudget: { dailyUsd: 20, perUserDailyUsd: 5 }\n${HOOKS}`),
      FILE,
      env,
    );
    const a = config.agents[0];
    expect(a?.timezone).toBe('Europe/Berlin');
    expect(a?.budget).toEqual({ dailyUsd: 20, perUserDailyUsd: 5 });
    expect(a?.webhooks?.listen).toEqual({
      host: '127.0.0.1',
      port: 8790,
      public: false,
      forwardedFor: false,
    });
    expect(a?.webhooks?.hooks[1]).toMatchObject({
      secret: { kind: 'file', path: '/etc/switchyard/alerts.secret' },
      route: { chatId: 123456789 },
      rate: { perMinute: 5, burst: 2 },
    });
    const read = webhookOptions(a?.webhooks, { GITHUB_WEBHOOK_SECRET: 's3cret' });
    expect(read).toMatchObject({
      ok: false,
      problem: expect.stringContaining('webhooks.hooks[1].secret: cannot read'),
    });
    const only = webhookOptions(a?.webhooks && { ...a.webhooks, hooks: a.webhooks.hooks.slice(0, 1) }, {
      GITHUB_WEBHOOK_SECRET: 's3cret',
    });
    expect(only).toEqual({
      ok: true,
      options: {
        listen: { host: '127.0.0.1', port: 8790 },
        hooks: [
          {
            name: 'github',
            kind: 'github',
            secret: 's3cret',
            route: { chatId: -1001234567890, threadId: 42 },
            events: ['workflow_run', 'pull_request'],
          },
        ],
        limits: { forwardedFor: false },
      },
    });
    expect(webhookOptions(a?.webhooks, {})).toMatchObject({
      ok: false,
      problem: 'webhooks.hooks[0].secret: environment variable GITHUB_WEBHOOK_SECRET is empty or missing',
    });
  });

  it('an inline secret never shows in config check', () => {
    const config = parseConfig(
      agent(
        'webhooks:\n  listen: { port: 8790 }\n  hooks:\n    - { name: x, kind: generic, secret: hunter2, chat: 1 }',
      ),
      FILE,
      env,
    );
    expect(describeConfig(config)).not.toContain('hunter2');
  });

  it.each([
    [
      'a host beyond loopback without public: true',
      'webhooks:\n  listen: { host: 0.0.0.0, port: 8790 }\n  hooks:\n    - { name: x, kind: generic, secret: s, chat: 1 }',
      'agents[0].webhooks.listen.host: 0.0.0.0 is reachable beyond this machine: put a TLS proxy in front and listen on 127.0.0.1, or add public: true if this is meant',
    ],
    [
      'two hooks of one name',
      'webhooks:\n  listen: { port: 8790 }\n  hooks:\n    - { name: x, kind: generic, secret: s, chat: 1 }\n    - { name: x, kind: generic, secret: s, chat: 2 }',
      'agents[0].webhooks.hooks[1].name: "x" is used by another hook',
    ],
    [
      'events on a generic hook',
      'webhooks:\n  listen: { port: 8790 }\n  hooks:\n    - { name: x, kind: generic, secret: s, chat: 1, events: [push] }',
      'agents[0].webhooks.hooks[0].events: events: is for kind: github only',
    ],
    [
      'a GitHub hook without events: (issue 27: every event was the default)',
      'webhooks:\n  listen: { port: 8790 }\n  hooks:\n    - { name: gh, kind: github, secret: s, chat: 1 }',
      'agents[0].webhooks.hooks[0].events: list the GitHub events this hook delivers, e.g. events: [workflow_run, pull_request] (no event is delivered by default: each one lets text from outside reach the agent)',
    ],
    [
      'an unknown zone',
      'timezone: Mars/Olympus',
      'agents[0].timezone: unknown time zone "Mars/Olympus": expected an IANA name like Europe/Berlin, America/New_York or UTC',
    ],
    [
      'a budget of nothing',
      'budget: {}',
      'agents[0].budget: give dailyUsd, perUserDailyUsd or both (or remove budget:)',
    ],
  ])('refuses %s', (_what, extra, problem) => {
    expect(configProblems(agent(extra))).toContain(problem);
  });

  it('takes a wider bind when it is said to be meant', () => {
    const config = parseConfig(
      agent(
        'webhooks:\n  listen: { host: 0.0.0.0, port: 8790, public: true }\n  hooks:\n    - { name: x, kind: generic, secret: s, chat: 1 }',
      ),
      FILE,
      env,
    );
    expect(config.agents[0]?.webhooks?.listen).toEqual({
      host: '0.0.0.0',
      port: 8790,
      public: true,
      forwardedFor: false,
    });
  });

  it('behind a proxy: forwardedFor and a connection cap reach the receiver as its listener limits', () => {
    const config = parseConfig(
      agent(
        'webhooks:\n  listen: { port: 8790, forwardedFor: true, maxConnections: 8 }\n  hooks:\n    - { name: x, kind: generic, secret: s, chat: 1 }',
      ),
      FILE,
      env,
    );
    const read = webhookOptions(config.agents[0]?.webhooks, {});
    expect(read.ok && read.options?.limits).toEqual({ forwardedFor: true, maxConnections: 8 });
  });

  it('config check names an unreadable secret, and where the receiver listens', () => {
    const config = parseConfig(agent(HOOKS), FILE, env);
    const webhookFindings = (e: Record<string, string>) =>
      checkConfigResources(config, { env: e, cwd: '/srv' }).filter((f) => f.path === 'agents[0].webhooks');
    expect(webhookFindings({})).toEqual([
      {
        level: 'error',
        path: 'agents[0].webhooks',
        message: 'webhooks.hooks[0].secret: environment variable GITHUB_WEBHOOK_SECRET is empty or missing',
        fix: 'make the secret readable there',
      },
    ]);
    const one = parseConfig(
      agent(
        'webhooks:\n  listen: { port: 8790 }\n  hooks:\n    - { name: x, kind: generic, secret: s, chat: 1 }',
      ),
      FILE,
      env,
    );
    expect(checkConfigResources(one, env).find((f) => f.path === 'agents[0].webhooks')).toEqual({
      level: 'ok',
      path: 'agents[0].webhooks',
      message: 'webhooks listen on 127.0.0.1:8790 (/hooks/x)',
    });
  });
});
