/**
 * The sandbox demo's script as the CLI reaches it: every user text starts with the bridge's
 * `[telegram …]` header line, so a rule anchored at the start of the text (the old `help`) never
 * matched and the list of demos was echoed instead. `run a command` must ask, so it runs a command the
 * CLI does not allow by itself.
 */
import { describe, expect, it } from 'vitest';
import { defaultScript, SCRIPTED_DEMOS } from '../src/anthropic/default-script.js';
import type { Reply } from '../src/anthropic/reply.js';
import { viewRequest } from '../src/anthropic/request.js';
import { type Step, stepsFor, type TurnContext } from '../src/anthropic/script.js';

const HEADER = '[telegram chat=1000001 msg=7 from="Sandbox User (@sandbox_user)" inbound=ib-3]';

/** The first step the default script serves for `typed`, as the CLI sends it after the header. */
function firstStep(typed: string): Step {
  const view = viewRequest({
    model: 'claude-opus-5-5',
    tools: [{ name: 'Bash' }, { name: 'Write' }],
    messages: [{ role: 'user', content: [{ type: 'text', text: `${HEADER}\n${typed}` }] }],
  });
  if (!view) throw new Error('not a request');
  const ctx: TurnContext = { ...view, step: 0, lastToolResults: [] };
  const [source] = stepsFor(defaultScript(), ctx);
  if (!source) throw new Error('no step');
  return typeof source === 'function' ? source(ctx) : source;
}

function textOf(step: Step): string {
  expect(step.type).toBe('reply');
  return (step as Reply).blocks.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

describe('the scripted demo script', () => {
  it('answers `help` after the telegram header with the list of demos, not an echo', () => {
    const help = textOf(firstStep('help'));
    expect(help).not.toContain('You said');
    for (const demo of SCRIPTED_DEMOS) expect(help).toContain(`\`${demo.say}\``);
  });

  it('runs a command for `run a command` that the CLI asks permission for (not `ls`)', () => {
    const step = firstStep('run a command') as Reply;
    const call = step.blocks.find((b) => b.type === 'tool_use') as
      | { name: string; input: { command: string } }
      | undefined;
    expect(call?.name).toBe('Bash');
    expect(call?.input.command).not.toMatch(/^ls\b/);
    expect(call?.input.command).toMatch(/^node -e /);
  });
});
