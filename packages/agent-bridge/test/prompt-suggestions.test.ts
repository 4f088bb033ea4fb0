/**
 * "Always allow" applies only what the user was shown and chose: the CLI's `addRules` suggestions for
 * the "always allow" button, one chosen suggestion for a separate button (a mode change, an added
 * directory), and never one past those offered. Pure functions on the session state.
 */
import { describe, expect, it } from 'vitest';
import { answerPrompt, openPrompt } from '../src/prompts.js';
import type { SessionState } from '../src/session-state.js';

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

function opened() {
  const s = { prompts: {} } as unknown as SessionState;
  const frame = openPrompt(
    s,
    { kind: 'permission', requestId: 'r1', toolName: 'Bash', input: { command: 'make' }, suggestions },
    { id: 't1', route: { chatId: 1 } },
  );
  return { s, frame };
}

function applied(decision: 'allow' | 'allow_always' | 'deny', indexes?: number[]): unknown {
  const { s } = opened();
  const answer = answerPrompt(s, {
    type: 'permission_answer',
    requestId: 'r1',
    decision,
    ...(indexes ? { suggestions: indexes } : {}),
  });
  const line = JSON.parse(answer?.line ?? '{}');
  return line.response.response.updatedPermissions;
}

describe('permission suggestions', () => {
  it('labels every suggestion with its kind and everything it would change', () => {
    const { frame } = opened();
    if (frame.type !== 'permission_request') throw new Error('not a permission prompt');
    expect(frame.suggestions).toEqual([
      { kind: 'addRules', label: 'allow Bash(make *) (localSettings)' },
      { kind: 'setMode', label: 'switch to acceptEdits mode (session)' },
      { kind: 'addDirectories', label: 'allow access to /etc (session)' },
      { kind: 'addRules', label: 'allow Read(//etc/**), Grep (session)' },
    ]);
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
