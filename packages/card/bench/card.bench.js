// Benchmark of the progress card: reduce a 10,000-event turn (50 main-agent tools, 10 sub-agents) and
// render its full card. Baselines are measured in the same run on the same machine, so the ratios hold
// on a busy CI box too. Run from the repository root:
//
//   npx tsc -b packages/card && node packages/card/bench/card.bench.js
//
// Goals (issue 3): a render costs less than one JSON.stringify of the same state, and the reducer
// sustains at least 100x the event rate of the real CLI (taken as 1,000 events/s; see README.md).
import { initialCardState, reduce, render } from '../dist/index.js';

const CLI_EVENTS_PER_SECOND = 1_000;
const TARGET_EVENTS = 10_000;

/** A deterministic turn: 50 main tools, 10 sub-agents doing many tool calls, narration and thinking. */
function makeTurn() {
  const events = [];
  let at = 1_000_000;
  const tick = () => (at += 37);
  events.push({
    type: 'turn_started',
    at: tick(),
    request: 'Refactor the loader & add <tests> for every edge case',
  });
  const tools = ['Read', 'Grep', 'Bash', 'Edit', 'Glob', 'WebFetch'];
  const input = (name, i) => ({
    file_path: `/srv/work/project/src/module${i % 17}/file${i}.ts`,
    pattern: `loadConfig\\(${i}\\)`,
    command: `npm test -- --grep "case ${i}"`,
    description: name === 'Bash' ? `Run test case ${i}` : undefined,
    url: `https://docs.example.com/page/${i}`,
  });
  for (let a = 0; a < 10; a += 1) {
    events.push({
      type: 'tool_started',
      at: tick(),
      toolUseId: `task${a}`,
      name: 'Task',
      input: { description: `Survey area ${a}` },
    });
    events.push({
      type: 'subagent_started',
      at: tick(),
      agentId: `task${a}`,
      agentType: a % 2 ? 'Explore' : 'general-purpose',
      description: `Survey area ${a} of the codebase for config loading`,
      prompt: 'Look at everything.',
    });
  }
  let mainTools = 0;
  let sub = 0;
  let lastMainSub = -1;
  // The tail below adds 30 events; a loop pass adds at most 5, and the gap is padded with thinking.
  while (events.length < TARGET_EVENTS - 35) {
    if (mainTools < 30 && sub % 30 === 0 && lastMainSub !== sub) {
      lastMainSub = sub;
      const name = tools[mainTools % tools.length];
      events.push({
        type: 'tool_started',
        at: tick(),
        toolUseId: `m${mainTools}`,
        name,
        input: input(name, mainTools),
      });
      events.push({
        type: 'tool_finished',
        at: tick(),
        toolUseId: `m${mainTools}`,
        isError: mainTools % 9 === 0,
        errorText: 'exit code 1',
      });
      mainTools += 1;
      continue;
    }
    const agent = `task${sub % 10}`;
    const name = tools[sub % tools.length];
    events.push({
      type: 'subagent_tool_started',
      at: tick(),
      agentId: agent,
      toolUseId: `s${sub}`,
      name,
      input: input(name, sub),
    });
    events.push({
      type: 'subagent_tool_finished',
      at: tick(),
      agentId: agent,
      toolUseId: `s${sub}`,
      isError: sub % 13 === 0,
    });
    if (sub % 5 === 0)
      events.push({
        type: 'subagent_text',
        at: tick(),
        agentId: agent,
        text: `Found ${sub} matches so far.`,
      });
    if (sub % 7 === 0) events.push({ type: 'thinking', at: tick() });
    if (sub % 11 === 0)
      events.push({ type: 'text', at: tick(), text: `Looking at case ${sub} next & checking <edge> cases.` });
    sub += 1;
  }
  while (events.length < TARGET_EVENTS - 20 - (40 - mainTools)) events.push({ type: 'thinking', at: tick() });
  for (let a = 0; a < 10; a += 1) {
    events.push({
      type: 'subagent_finished',
      at: tick(),
      agentId: `task${a}`,
      outcome: a === 3 ? 'killed' : 'success',
    });
    events.push({ type: 'tool_finished', at: tick(), toolUseId: `task${a}`, isError: false });
  }
  // The turn's last main tools stay running, so the card is shown mid-turn with everything in it.
  // 30 finished + 10 running main tools + 10 Task calls = 50 tool calls of the main agent.
  for (; mainTools < 40; mainTools += 1) {
    const name = tools[mainTools % tools.length];
    events.push({
      type: 'tool_started',
      at: tick(),
      toolUseId: `m${mainTools}`,
      name,
      input: input(name, mainTools),
    });
  }
  return events;
}

function time(fn, minMs = 300) {
  const start = performance.now();
  let runs = 0;
  let elapsed = 0;
  do {
    fn();
    runs += 1;
    elapsed = performance.now() - start;
  } while (elapsed < minMs);
  return elapsed / runs; // ms per call
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const events = makeTurn();
const reduceAll = () => events.reduce(reduce, initialCardState(events[0].at));
const state = reduceAll();
const now = events.at(-1).at + 5_000;
const html = render(state, now);
let sink = 0;

// Warm up both paths before measuring.
for (let i = 0; i < 20; i += 1)
  sink += reduceAll().eventCount + render(state, now).length + JSON.stringify(state).length;

const rounds = 7;
const reduceMs = [];
const renderMs = [];
const stringifyMs = [];
for (let r = 0; r < rounds; r += 1) {
  reduceMs.push(time(() => (sink += reduceAll().eventCount)));
  renderMs.push(time(() => (sink += render(state, now).length)));
  stringifyMs.push(time(() => (sink += JSON.stringify(state).length)));
}

const perTurnMs = median(reduceMs);
const eventsPerSecond = events.length / (perTurnMs / 1000);
const renderOne = median(renderMs);
const stringifyOne = median(stringifyMs);
const json = JSON.stringify(state);

const fmt = (n, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
console.log(`card benchmark — node ${process.version}, ${rounds} rounds, medians`);
console.log(
  `  turn: ${events.length} events, ${state.steps.length + state.droppedSteps} main-agent tool calls, ${state.subagents.length} sub-agents`,
);
console.log(
  `  state JSON: ${fmt(json.length, 0)} chars; card HTML: ${fmt(html.length, 0)} chars (limit 4096)`,
);
console.log('');
console.log(
  `  reduce:  ${fmt((perTurnMs * 1e6) / events.length, 0)} ns/event, ${fmt(eventsPerSecond, 0)} events/s`,
);
console.log(
  `           baseline 100x CLI = ${fmt(100 * CLI_EVENTS_PER_SECOND, 0)} events/s -> ratio ${fmt(eventsPerSecond / (100 * CLI_EVENTS_PER_SECOND), 2)}x (goal >= 1)`,
);
console.log(`  render:  ${fmt(renderOne * 1000, 1)} µs/render`);
console.log(
  `           baseline JSON.stringify(state) = ${fmt(stringifyOne * 1000, 1)} µs -> render/stringify ${fmt(renderOne / stringifyOne, 2)} (goal < 1)`,
);
const ok = eventsPerSecond >= 100 * CLI_EVENTS_PER_SECOND && renderOne < stringifyOne;
console.log('');
console.log(ok ? '  PASS: both goals met' : '  FAIL: a goal was missed');
if (sink === 0) console.log('');
process.exitCode = ok ? 0 : 1;
