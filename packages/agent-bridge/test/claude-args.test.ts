/** The CLI's command line: the bridge's system-prompt text is passed with `--append-system-prompt` (issue 27). */
import { UNTRUSTED_INPUT_RULE } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { CLAUDE_STREAM_ARGS, claudeArgs } from '../src/core/process/claude-args.js';

describe('claudeArgs', () => {
  it('appends the system-prompt text before the operator’s extra arguments', () => {
    expect(claudeArgs({ extra: ['--x'] })).toEqual([
      ...CLAUDE_STREAM_ARGS,
      '--append-system-prompt',
      UNTRUSTED_INPUT_RULE,
      '--x',
    ]);
    expect(UNTRUSTED_INPUT_RULE).toContain('<untrusted_input source="...">');
  });

  it('names the settings files to read only when told (a lane reads user and project, not local)', () => {
    expect(claudeArgs({})).not.toContain('--setting-sources');
    const args = claudeArgs({ settingSources: 'user,project' });
    expect(args.slice(args.indexOf('--setting-sources'), args.indexOf('--setting-sources') + 2)).toEqual([
      '--setting-sources',
      'user,project',
    ]);
  });
});
