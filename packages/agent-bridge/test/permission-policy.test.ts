/**
 * The operator's limits as the bridge applies them at a process start: `bypassPermissions` only when
 * `allowedModes` lists it, and a mode a conversation kept from before the list changed never returns.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PERMISSION_POLICY, modeAllowed, startMode } from '../src/core/prompts/permission-policy.js';

describe('startMode', () => {
  it('passes a kept or configured mode only while it is allowed', () => {
    const policy = DEFAULT_PERMISSION_POLICY;
    expect(modeAllowed(policy, 'bypassPermissions')).toBe(false);
    expect(startMode(policy, 'acceptEdits', 'plan')).toBe('acceptEdits');
    expect(startMode(policy, 'bypassPermissions', 'plan')).toBe('plan');
    expect(startMode(policy, 'bypassPermissions', undefined)).toBeUndefined();
    expect(startMode(policy, undefined, 'bypassPermissions')).toBeUndefined();
    const open = { ...policy, allowedModes: ['default', 'bypassPermissions'] as const };
    expect(startMode(open, 'bypassPermissions', undefined)).toBe('bypassPermissions');
    expect(startMode(open, 'acceptEdits', 'default')).toBe('default');
  });
});
