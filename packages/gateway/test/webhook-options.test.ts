/**
 * The receiver's options as the gateway takes them (issue 27): a GitHub hook must list its events —
 * every event but `ping` was delivered when `events` was left out, each one a stranger's text — and the
 * gateway refuses to be made without them, saying what to write.
 */
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/gateway.js';
import { type WebhookOptions, webhookOptionsProblem } from '../src/io/automation/webhook-options.js';

const hook = { name: 'gh', kind: 'github', secret: 's', route: { chatId: 1 } } as const;
const receiver = (hooks: WebhookOptions['hooks']): WebhookOptions => ({
  listen: { host: '127.0.0.1', port: 0 },
  hooks,
});

describe('webhook options', () => {
  it('refuse a GitHub hook without events, saying what to write', () => {
    expect(webhookOptionsProblem(receiver([hook]))).toMatch(
      /^webhook "gh": list the GitHub events it delivers, e\.g\. events: \[workflow_run, pull_request\]/,
    );
    expect(webhookOptionsProblem(receiver([{ ...hook, events: [] }]))).toContain('list the GitHub events');
  });

  it('take a GitHub hook with events, and a generic hook without', () => {
    expect(
      webhookOptionsProblem(
        receiver([
          { ...hook, events: ['push'] },
          { name: 'alerts', kind: 'generic', secret: 's', route: { chatId: 1 } },
        ]),
      ),
    ).toBeUndefined();
  });

  it('createGateway throws for a GitHub hook without events', () => {
    expect(() =>
      createGateway({
        agent: 'demo',
        token: '1:x',
        allowUsers: [1],
        stateDir: '/nonexistent',
        socketPath: '/nonexistent/s',
        webhooks: receiver([hook]),
      }),
    ).toThrow('list the GitHub events it delivers');
  });
});
