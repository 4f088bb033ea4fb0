import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CardEvent,
  type CardState,
  closeCard,
  formatDuration,
  initialCardState,
  MESSAGE_LIMIT,
  reduce,
  render,
} from '../src/index.js';
import { ev } from './events.js';
import { telegramHtmlProblem } from './html-check.js';

const run = (events: readonly CardEvent[], state: CardState = initialCardState(0)): CardState =>
  events.reduce(reduce, state);

describe('render', () => {
  it('shows stage and elapsed time in the header, and the request escaped', () => {
    const html = render(run([ev.start(0, 'fix <b> & "co"')]), 65_000);
    expect(html.split('\n')[0]).toBe('⚙️ <b>Working</b> · 1m 05s');
    expect(html).toContain('fix &lt;b&gt; &amp; &quot;co&quot;');
    expect(telegramHtmlProblem(html)).toBeUndefined();
  });

  it('says it waits for the user while a prompt is open', () => {
    const html = render(run([ev.start(0), ev.ask(1, 'r', 'Bash', 'rm -rf <dist>')]), 2_000);
    expect(html).toMatch(/^❓ <b>Waiting for your answer<\/b>/);
    expect(html).toContain('🔐 Wants to rm -rf &lt;dist&gt;');
  });

  it('says what a prompt asks to do once, in words, not "Write write hello.md" (issue 31)', () => {
    const ask = ev.ask(1, 'r', 'Write', 'write hello.md (/w/hello.md)');
    const html = render(run([ev.start(0), ask]), 2_000);
    expect(html).toContain('🔐 Wants to write hello.md (/w/hello.md)');
    expect(html).not.toMatch(/Write<\/b> write/);
    const question: CardEvent = { type: 'permission_waiting', at: 1, requestId: 'q' };
    expect(render(run([ev.start(0), question]), 2_000)).toContain('❓ A question for you');
    const bare: CardEvent = { type: 'permission_waiting', at: 1, requestId: 'b', toolName: 'Bash' };
    expect(render(run([ev.start(0), bare]), 2_000)).toContain('🔐 Wants to use <b>Bash</b>');
  });

  it("shows an AskUserQuestion call as the question asked, not as the tool's name (issue 31)", () => {
    const input = { questions: [{ question: 'Which colour?', header: 'Colour', options: [] }] };
    const running = render(run([ev.start(0), ev.tool(1, 'q', 'AskUserQuestion', input)]), 2_000);
    expect(running).toContain('▶ Question: Which colour? · 1s');
    const done = render(
      run([ev.start(0), ev.tool(1, 'q', 'AskUserQuestion', input), ev.done(2, 'q')]),
      3_000,
    );
    expect(done).toContain('✓ Question: Which colour?');
    expect(done).not.toContain('AskUserQuestion');
  });

  it('collapses a run of one tool into one line and shows failures on their own', () => {
    const events: CardEvent[] = [ev.start(0)];
    for (let i = 0; i < 12; i += 1)
      events.push(ev.tool(i, `r${i}`, 'Read', { file_path: `f${i}.ts` }), ev.done(i, `r${i}`));
    events.push(ev.tool(20, 'b', 'Bash', { description: 'Run tests' }), ev.done(21, 'b', 'exit 1'));
    const html = render(run(events), 30_000);
    expect(html).toContain('✓ Read 12 files');
    expect(html).toContain('✗ Bash: Run tests — exit 1');
  });

  it('shows what the model thought, not only that it thinks (issue 31)', () => {
    const thought: CardEvent = {
      type: 'thinking',
      at: 1,
      text: 'The user wants to see <thinking>.\nBriefly.',
    };
    expect(render(run([ev.start(0), thought]), 2_000)).toContain(
      '💭 <i>The user wants to see &lt;thinking&gt;. Briefly.</i>',
    );
    // Its text ends the thought; a tool ends it too.
    expect(render(run([ev.start(0), thought, ev.text(3, 'Answer.')]), 4_000)).not.toContain('💭');
  });

  it('shows the current step with its own elapsed time, and thinking when nothing runs', () => {
    expect(render(run([ev.start(0), ev.thinking(1)]), 2_000)).toContain('💭 Thinking…');
    const html = render(run([ev.start(0), ev.tool(10_000, 'e', 'Edit', { file_path: 'a.ts' })]), 40_000);
    expect(html).toContain('▶ Edit a.ts · 30s');
  });

  it('gives each sub-agent a row with its state and current tool, children under their parent', () => {
    const s = run([
      ev.start(0),
      ev.agent(1, 'outer', 'survey', 'general'),
      ev.agentTool(2, 'outer', 'inner', 'Task', { description: 'dig' }),
      ev.agent(3, 'inner', 'dig', 'Explore'),
      ev.agentTool(4, 'inner', 'g', 'Grep', { pattern: 'TODO' }),
      ev.agent(5, 'third', 'lint', 'general'),
      ev.agentEnd(6, 'third', 'killed'),
    ]);
    const lines = render(s, 10_000).split('\n');
    const at = lines.findIndex((l) => l.includes('survey'));
    expect(lines[at]).toMatch(/^🔄 <b>general<\/b> survey — Task: dig/);
    expect(lines[at + 1]).toMatch(/^ {3}↳ 🔄 <b>Explore<\/b> dig — Grep: TODO · 1 tool/);
    expect(lines[at + 2]).toMatch(/^⛔ <b>general<\/b> lint/);
  });

  it('warns when nothing happened for the stuck threshold, and only while something runs', () => {
    const s = run([ev.start(0), ev.tool(1_000, 'a')]);
    expect(render(s, 100_000)).not.toContain('may be stuck');
    expect(render(s, 121_000)).toContain('⚠️ No events for 2m 00s; it may be stuck.');
    expect(render(s, 31_000, { stuckAfterMs: 30_000 })).toContain('may be stuck');
    expect(render(run([ev.end(2_000)], s), 500_000)).not.toContain('may be stuck');
  });

  it('renders the final card with the outcome, the frozen duration and the cost (I5)', () => {
    const done = render(run([ev.start(0), ev.end(90_000)]), 500_000);
    expect(done.split('\n')[0]).toBe('✅ <b>Done</b> · 1m 30s');
    expect(done).toContain('💰 $0.042 · 12.3k in / 678 out');
    expect(render(run([ev.start(0), ev.end(5, 'interrupted')]), 9)).toMatch(/^⏹ <b>Interrupted<\/b>/);
    expect(render(run([ev.start(0), ev.end(5, 'error', 'overloaded')]), 9)).toContain('❗ overloaded');
    expect(render(closeCard(run([ev.start(0)]), 600_000, 'idle'), 600_000)).toMatch(
      /^⏸ <b>Stopped tracking<\/b>/,
    );
  });

  it("labels the cost of a stand-in model (the sandbox's scripted one) as simulated, never as spent", () => {
    const done = run([ev.start(0), ev.end(90_000)]);
    expect(render(done, 500_000, { simulatedCost: true })).toContain(
      '💰 $0.042 · 12.3k in / 678 out (simulated: nothing was spent)',
    );
    expect(render(done, 500_000)).not.toContain('simulated');
  });

  it('says how many sub-agents still run after the turn is done, counting the time they run', () => {
    const html = render(run([ev.start(0), ev.agent(1, 'bg'), ev.end(2)]), 5_000);
    expect(html.split('\n')[0]).toBe('✅ <b>Done</b> · 5s · 1 sub-agent still running');
  });

  it('counts a background sub-agent in the final duration: not "Done · 0s" after 5 s of work (issue 31)', () => {
    const s = run([ev.start(0), ev.agent(100, 'bg'), ev.end(300), ev.agentEnd(5_200, 'bg')]);
    expect(render(s, 60_000).split('\n')[0]).toBe('✅ <b>Done</b> · 5s');
    // A superseded card closes at the new turn, whatever its moved sub-agents do later.
    expect(render(run([ev.start(0), ev.end(1_000)]), 60_000).split('\n')[0]).toBe('✅ <b>Done</b> · 1s');
  });

  it('leaves out token counts a turn never reported: no "0 in / 0 out" after an interrupt (issue 31)', () => {
    const end: CardEvent = {
      type: 'turn_ended',
      at: 5_000,
      outcome: 'interrupted',
      usage: { inputTokens: 0, outputTokens: 0 },
      costUsd: 0.061,
    };
    const html = render(run([ev.start(0), end]), 6_000);
    expect(html).toContain('💰 $0.061');
    expect(html).not.toContain('0 in / 0 out');
  });

  it('elides the oldest steps first, says how many, and stays under the limit', () => {
    const events: CardEvent[] = [ev.start(0)];
    for (let i = 0; i < 150; i += 1) {
      events.push(ev.tool(i, `t${i}`, `Tool${i}`, {}), ev.done(i, `t${i}`, `error number ${i} `.repeat(8)));
    }
    const html = render(run(events), 200_000);
    expect(html.length).toBeLessThan(MESSAGE_LIMIT);
    expect(html).toMatch(/… \d+ earlier steps/);
    expect(html).toContain('Tool149');
    expect(html).not.toContain('Tool0 ');
  });

  it('formats durations', () => {
    expect([
      formatDuration(-5),
      formatDuration(59_999),
      formatDuration(61_000),
      formatDuration(3_725_000),
    ]).toEqual(['0s', '59s', '1m 01s', '1h 02m']);
  });
});

// ---------------------------------------------------------------------------------------------------
// Properties: for any sequence of events, rendering never throws, is valid Telegram HTML, and fits.

const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 400 }),
  fc.constantFrom('<b>', '</i>', '&amp', '&', '"', '<a href="x">', '🙂'.repeat(300), 'x'.repeat(5000), ''),
  fc.string({ unit: fc.constantFrom('<', '>', '&', ' ', 'a', '\n', '🙂'), maxLength: 3000 }),
);
const id = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
const time = fc.integer({ min: 0, max: 2_000_000 });
const input = fc.dictionary(
  fc.constantFrom('file_path', 'command', 'description', 'pattern', 'url', 'query', 'other'),
  fc.oneof(nasty, fc.integer(), fc.constant(null)),
);
const toolName = fc.oneof(fc.constantFrom('Read', 'Bash', 'Grep', 'WebFetch', 'Task', 'mcp__x__y'), nasty);

const event: fc.Arbitrary<CardEvent> = fc.oneof(
  fc.record({ type: fc.constant('turn_started'), at: time, request: nasty }),
  fc.record({ type: fc.constant('thinking'), at: time }),
  fc.record({ type: fc.constant('text'), at: time, text: nasty }),
  fc.record({ type: fc.constant('tool_started'), at: time, toolUseId: id, name: toolName, input }),
  fc.record({
    type: fc.constant('tool_finished'),
    at: time,
    toolUseId: id,
    isError: fc.boolean(),
    errorText: nasty,
  }),
  fc.record({
    type: fc.constant('subagent_started'),
    at: time,
    agentId: id,
    agentType: nasty,
    description: nasty,
    prompt: nasty,
  }),
  fc.record({
    type: fc.constant('subagent_tool_started'),
    at: time,
    agentId: id,
    toolUseId: id,
    name: toolName,
    input,
  }),
  fc.record({
    type: fc.constant('subagent_tool_finished'),
    at: time,
    agentId: id,
    toolUseId: id,
    isError: fc.boolean(),
  }),
  fc.record({ type: fc.constant('subagent_text'), at: time, agentId: id, text: nasty }),
  fc.record({
    type: fc.constant('subagent_finished'),
    at: time,
    agentId: id,
    outcome: fc.constantFrom('success', 'error', 'killed'),
  }),
  fc.record({
    type: fc.constant('permission_waiting'),
    at: time,
    requestId: id,
    toolName: nasty,
    summary: nasty,
  }),
  fc.record({ type: fc.constant('permission_answered'), at: time, requestId: id }),
  fc.record({
    type: fc.constant('turn_ended'),
    at: time,
    outcome: fc.constantFrom('success', 'error', 'interrupted'),
    error: nasty,
    costUsd: fc.double({ min: 0, max: 1e6, noNaN: true }),
  }),
);

describe('render properties', () => {
  it('never throws, emits only balanced Telegram tags, and fits the message limit', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 120 }), time, (events, now) => {
        const html = render(events.reduce(reduce, initialCardState(0)), now);
        expect(html.length).toBeLessThan(MESSAGE_LIMIT);
        expect(telegramHtmlProblem(html)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('fits the limit even with many distinct ids (many rows, many steps)', () => {
    const manyIds = fc.integer({ min: 0, max: 500 }).map(String);
    const wide = fc.oneof(
      fc.record({ type: fc.constant('tool_started'), at: time, toolUseId: manyIds, name: toolName, input }),
      fc.record({
        type: fc.constant('tool_finished'),
        at: time,
        toolUseId: manyIds,
        isError: fc.boolean(),
        errorText: nasty,
      }),
      fc.record({
        type: fc.constant('subagent_started'),
        at: time,
        agentId: manyIds,
        agentType: nasty,
        description: nasty,
        prompt: nasty,
      }),
      fc.record({
        type: fc.constant('subagent_tool_started'),
        at: time,
        agentId: manyIds,
        toolUseId: manyIds,
        name: toolName,
        input,
      }),
      fc.record({
        type: fc.constant('permission_waiting'),
        at: time,
        requestId: manyIds,
        toolName: nasty,
        summary: nasty,
      }),
    ) as fc.Arbitrary<CardEvent>;
    fc.assert(
      fc.property(fc.array(wide, { minLength: 50, maxLength: 400 }), time, (events, now) => {
        const html = render(events.reduce(reduce, initialCardState(0)), now);
        expect(html.length).toBeLessThan(MESSAGE_LIMIT);
        expect(telegramHtmlProblem(html)).toBeUndefined();
      }),
      { numRuns: 60 },
    );
  });

  it('the HTML checker itself rejects what Telegram would reject', () => {
    expect(telegramHtmlProblem('<b>x</i>')).toBeDefined();
    expect(telegramHtmlProblem('<div>x</div>')).toBeDefined();
    expect(telegramHtmlProblem('a < b')).toBeDefined();
    expect(telegramHtmlProblem('a & b')).toBeDefined();
    expect(telegramHtmlProblem('<b>x')).toBeDefined();
    expect(telegramHtmlProblem('<b>a &amp; b</b>')).toBeUndefined();
  });
});
