/**
 * A webhook's or schedule's own conversation (a route with a lane, issue 27): its own key and directory,
 * the operator's automation mode instead of the chat's or the agent's (bypassPermissions never), and
 * "always allow" kept to its session whatever the agent's scope.
 */
import { conversationKey } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { type BridgeOptions, conversationDir, settingsOf } from '../src/options.js';

const base: BridgeOptions = {
  agent: 'demo',
  restartOnExit: true,
  stuckAfterMs: 60_000,
  socketPath: '/run/s.sock',
  stateDir: '/state',
  workDir: '/work',
  claudeBin: 'claude',
  permissionMode: 'bypassPermissions',
  permissions: { allowedModes: ['default', 'acceptEdits', 'bypassPermissions'], alwaysAllowScope: 'project' },
  settingsFor: () => ({ permissionMode: 'acceptEdits' }),
};

describe('a lane’s settings', () => {
  const lane = { chatId: -100, threadId: 7, lane: 'webhook-github' };

  it('is a conversation of its own, beside the chat’s', () => {
    expect(conversationKey(lane)).toBe('-100:7~webhook-github');
    expect(conversationDir(conversationKey(lane))).toBe('c-100_t7_lwebhook-github');
    expect(conversationKey({ chatId: -100, threadId: 7 })).toBe('-100:7');
  });

  it('runs in the automation mode, never the chat’s or bypassPermissions, rules kept to its session', () => {
    expect(settingsOf(base, { chatId: -100, threadId: 7 })).toMatchObject({ permissionMode: 'acceptEdits' });
    expect(settingsOf(base, lane)).toMatchObject({
      permissionMode: 'default',
      permissions: { alwaysAllowScope: 'session' },
      workDir: '/work',
    });
    expect(settingsOf({ ...base, automationMode: 'plan' }, lane).permissionMode).toBe('plan');
  });

  it('does not read the working directory’s settings.local.json, where chats’ project-wide rules land', () => {
    expect(settingsOf(base, lane).settingSources).toBe('user,project');
    expect(settingsOf(base, { chatId: -100, threadId: 7 }).settingSources).toBeUndefined();
  });
});
