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

  // What the CLI adds for a photo (measured with 2.1.328): the image block, and a line naming its copy.
  const IMAGE_LINE = '[Image: source: /tmp/claude-0/-tmp-probe/eda6a363/images/1.png]';
  const FILE_LINE = '[file: /state/files/in-7f3a.pdf (report.pdf, application/pdf, 20480 bytes)]';

  it("echoes a photo without the CLI's temporary path, and says what came (issue 31)", () => {
    const captioned = textOf(firstStep(`a sunset\n${IMAGE_LINE}`));
    expect(captioned).not.toContain('/tmp/claude');
    expect(captioned).toContain('a picture');
    expect(captioned).toContain('> a sunset');
    const bare = textOf(firstStep(IMAGE_LINE));
    expect(bare).not.toContain('/tmp/claude');
    expect(bare).toMatch(/You sent a picture/);
  });

  it('echoes a document by its name, not as an empty quote (issue 31)', () => {
    const echo = textOf(firstStep(FILE_LINE));
    expect(echo).toMatch(/You sent report\.pdf/);
    expect(echo).not.toMatch(/>\s*\n/);
    expect(echo).not.toContain('/state/files');
  });

  it("answers `ask me` with the choice, not the CLI's tool result (issue 31)", () => {
    const view = viewRequest({
      model: 'claude-opus-5-5',
      tools: [{ name: 'AskUserQuestion' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: `${HEADER}\nask me` }] }],
    });
    if (!view) throw new Error('not a request');
    const result =
      'User has answered your questions: "Which colour should the sandbox use?"="Green". You can now continue with the user\'s answers in mind.';
    const ctx: TurnContext = {
      ...view,
      step: 1,
      lastToolResults: [{ toolUseId: 'toolu_1', isError: false, text: result }],
    };
    const source = stepsFor(defaultScript(), ctx)[1];
    if (!source) throw new Error('no second step');
    const answer = textOf(typeof source === 'function' ? source(ctx) : source);
    expect(answer).toBe('You answered **Green** to “Which colour should the sandbox use?”');
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
