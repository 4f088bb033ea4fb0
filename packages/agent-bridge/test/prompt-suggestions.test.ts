/**
 * "Always allow" applies only what the user was shown and chose: the CLI's `addRules` suggestions for
 * the "always allow" button, one chosen suggestion for a separate button (a mode change, an added
 * directory), and never one past those offered. Pure functions on the session state.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PERMISSION_POLICY,
  type PermissionPolicy,
  scopedSuggestions,
} from '../src/core/prompts/permission-policy.js';
import { answerPrompt, openPrompt } from '../src/core/prompts/prompts.js';
import type { SessionState } from '../src/core/session/state.js';

/** As the CLI sends them (see reference/claude-cli-probe.md). */
const suggestions = [
  {
    type: 'addRules',
    rules: [{ toolName: 'Bash', ruleContent: 'make *' }],
    behavior: 'allow',
    destination: 'localSettings',
  },
  { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
  { type: 'addDirectories', directories: ['/etc'], destination: 'session' },
  {
    type: 'addRules',
    rules: [{ toolName: 'Read', ruleContent: '//etc/**' }, { toolName: 'Grep' }],
    behavior: 'allow',
    destination: 'session',
  },
];

function opened(policy: PermissionPolicy = DEFAULT_PERMISSION_POLICY, offered: unknown[] = suggestions) {
  const s = { prompts: {} } as unknown as SessionState;
  const frame = openPrompt(
    s,
    {
      kind: 'permission',
      requestId: 'r1',
      toolName: 'Bash',
      input: { command: 'make' },
      suggestions: offered,
    },
    { id: 't1', route: { chatId: 1 } },
    { policy, workDir: '/srv/app' },
  );
  return { s, frame };
}

function applied(
  decision: 'allow' | 'allow_always' | 'deny',
  indexes?: number[],
  policy: PermissionPolicy = { ...DEFAULT_PERMISSION_POLICY, alwaysAllowScope: 'project' },
): unknown {
  const { s } = opened(policy);
  const answer = answerPrompt(
    s,
    {
      type: 'permission_answer',
      requestId: 'r1',
      decision,
      ...(indexes ? { suggestions: indexes } : {}),
    },
    policy,
  );
  const line = JSON.parse(answer?.line ?? '{}');
  return line.response.response.updatedPermissions;
}

describe('permission suggestions', () => {
  it('labels every suggestion with its kind, everything it would change, and in words where it applies', () => {
    const { frame } = opened({ ...DEFAULT_PERMISSION_POLICY, alwaysAllowScope: 'project' });
    if (frame.type !== 'permission_request') throw new Error('not a permission prompt');
    expect(frame.suggestions).toEqual([
      { kind: 'addRules', label: 'allow Bash(make *)', where: 'every conversation in /srv/app' },
      { kind: 'setMode', label: 'allow all edits from now on', where: 'this conversation' },
      { kind: 'addDirectories', label: 'allow access to /etc', where: 'this conversation' },
      { kind: 'addRules', label: 'allow Read(//etc/**), Grep', where: 'this conversation' },
    ]);
  });

  it('keeps an "always allow" to this conversation by default: a localSettings rule becomes a session one', () => {
    const { frame } = opened();
    if (frame.type !== 'permission_request') throw new Error('not a permission prompt');
    expect(frame.suggestions[0]).toEqual({
      kind: 'addRules',
      label: 'allow Bash(make *)',
      where: 'this conversation',
    });
    expect(applied('allow_always', [0], DEFAULT_PERMISSION_POLICY)).toEqual([
      { ...suggestions[0], destination: 'session' },
    ]);
    // With `project`, a rule may reach the directory's settings but never the user's own.
    const user = [{ ...suggestions[0], destination: 'userSettings' }];
    const { s } = opened({ ...DEFAULT_PERMISSION_POLICY, alwaysAllowScope: 'project' }, user);
    const answer = answerPrompt(s, {
      type: 'permission_answer',
      requestId: 'r1',
      decision: 'allow_always',
      suggestions: [0],
    });
    expect(JSON.parse(answer?.line ?? '{}').response.response.updatedPermissions).toEqual([
      { ...suggestions[0], destination: 'session' },
    ]);
  });

  it('never offers a mode change to a mode the operator does not allow', () => {
    const offered = [
      { type: 'setMode', mode: 'bypassPermissions', destination: 'session' },
      { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
    ];
    const { frame } = opened(DEFAULT_PERMISSION_POLICY, offered);
    if (frame.type !== 'permission_request') throw new Error('not a permission prompt');
    expect(frame.suggestions.map((x) => x.label)).toEqual(['allow all edits from now on']);
    const { frame: none } = opened({ ...DEFAULT_PERMISSION_POLICY, allowedModes: ['default'] }, offered);
    expect(none.type === 'permission_request' && none.suggestions).toEqual([]);
  });

  it('applies the chosen suggestions only, and the addRules ones when none are named', () => {
    expect(applied('allow_always', [1])).toEqual([suggestions[1]]);
    expect(applied('allow_always', [3, 0, 3])).toEqual([suggestions[0], suggestions[3]]);
    // An older gateway's "always allow": the rules it listed, never the mode change or the directory.
    expect(applied('allow_always')).toEqual([suggestions[0], suggestions[3]]);
    expect(applied('allow_always', [7])).toBeUndefined();
    expect(applied('allow', [1])).toBeUndefined();
  });
});

describe('the reach of a project-wide "always allow"', () => {
  it('lands in the working directory’s settings.local.json whatever file the CLI proposed', () => {
    const policy: PermissionPolicy = { ...DEFAULT_PERMISSION_POLICY, alwaysAllowScope: 'project' };
    const proposed = ['projectSettings', 'userSettings', 'localSettings'].map((destination) => ({
      type: 'addRules',
      rules: [{ toolName: 'Bash', ruleContent: 'make *' }],
      behavior: 'allow',
      destination,
    }));
    // Never settings.json, which a webhook's or schedule's own conversation reads (it skips the local file).
    expect(
      scopedSuggestions(policy, proposed).map((s) => (s as { destination: string }).destination),
    ).toEqual(['localSettings', 'localSettings', 'localSettings']);
    expect(
      scopedSuggestions(DEFAULT_PERMISSION_POLICY, proposed).map(
        (s) => (s as { destination: string }).destination,
      ),
    ).toEqual(['session', 'session', 'session']);
  });
});
