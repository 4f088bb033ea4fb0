import { describe, expect, it } from 'vitest';
import {
  type CardEvent,
  type CardState,
  closeCard,
  handOver,
  initialCardState,
  isActive,
  reduce,
  STEP_CAP,
  stageOf,
} from '../src/index.js';
import { ev } from './events.js';

const run = (events: readonly CardEvent[], state: CardState = initialCardState(0)): CardState =>
  events.reduce(reduce, state);

describe('reduce: tools', () => {
  it('pairs parallel tool results with their calls by id, not by order', () => {
    const s = run([
      ev.start(0),
      ev.tool(1, 'a'),
      ev.tool(1, 'b'),
      ev.tool(1, 'c'),
      ev.done(2, 'c'),
      ev.done(3, 'a', 'boom'),
    ]);
    expect(s.steps.map((x) => [x.id, x.status])).toEqual([
      ['a', 'error'],
      ['b', 'running'],
      ['c', 'ok'],
    ]);
    expect(s.steps[0]?.errorText).toBe('boom');
  });

  it('applies a finish that arrives before its start when the start comes', () => {
    const s = run([ev.start(0), ev.done(1, 'x'), ev.tool(2, 'x', 'Bash', { command: 'ls' })]);
    expect(s.steps).toHaveLength(1);
    expect(s.steps[0]?.status).toBe('ok');
    expect(s.early).toEqual({});
  });

  it('returns the same state for a duplicate start, a duplicate finish and a second end', () => {
    const s = run([ev.start(0), ev.tool(1, 'a'), ev.done(2, 'a'), ev.end(3)]);
    expect(reduce(s, ev.start(4))).toBe(s);
    expect(reduce(s, ev.tool(4, 'a'))).toBe(s);
    expect(reduce(s, ev.done(4, 'a'))).toBe(s);
    expect(reduce(s, ev.end(5, 'error'))).toBe(s);
  });

  it('ignores main-agent events after the end, and marks tools still running as abandoned', () => {
    const s = run([
      ev.start(0),
      ev.tool(1, 'a'),
      ev.end(2, 'interrupted'),
      ev.tool(3, 'b'),
      ev.text(3, 'late'),
    ]);
    expect(s.steps.map((x) => x.status)).toEqual(['abandoned']);
    expect(s.narration).toBeUndefined();
    expect(stageOf(s)).toBe('interrupted');
  });

  it('keeps at most STEP_CAP finished steps and counts the rest', () => {
    const events: CardEvent[] = [ev.start(0)];
    for (let i = 0; i < STEP_CAP + 30; i += 1) events.push(ev.tool(i, `t${i}`), ev.done(i, `t${i}`));
    events.push(ev.tool(999, 'live'));
    const s = run(events);
    expect(s.droppedSteps).toBe(30);
    expect(s.steps.filter((x) => x.status !== 'running')).toHaveLength(STEP_CAP);
    expect(s.steps.at(-1)?.id).toBe('live');
  });
});

describe('reduce: stages', () => {
  it('goes working → waiting → working → done, keeping usage and cost', () => {
    let s = run([ev.start(0, 'deploy it')]);
    expect(stageOf(s)).toBe('working');
    s = reduce(s, ev.ask(1, 'r1'));
    expect(stageOf(s)).toBe('waiting');
    s = reduce(s, ev.answered(2, 'r1'));
    expect(stageOf(s)).toBe('working');
    s = reduce(s, ev.end(3));
    expect(stageOf(s)).toBe('done');
    expect(s.costUsd).toBeCloseTo(0.0421);
    expect(s.usage?.inputTokens).toBe(12_345);
    expect(s.endedAt).toBe(3);
  });

  it('reports failure with the error in plain words', () => {
    const s = run([ev.start(0), ev.end(5, 'error', 'API overloaded\nretry later')]);
    expect(stageOf(s)).toBe('failed');
    expect(s.error).toBe('API overloaded retry later');
  });

  it('closes a turn that never ended as stopped, and a real end afterwards still wins', () => {
    const stopped = closeCard(run([ev.start(0), ev.tool(1, 'a')]), 600_000, 'idle');
    expect(stageOf(stopped)).toBe('stopped');
    expect(stopped.steps[0]?.status).toBe('abandoned');
    expect(stageOf(reduce(stopped, ev.end(600_001)))).toBe('done');
  });

  it('keeps lastEventAt monotonic when events arrive out of time order', () => {
    const s = run([ev.start(100), ev.thinking(500), ev.text(300, 'hello')]);
    expect(s.lastEventAt).toBe(500);
  });
});

describe('reduce: sub-agents', () => {
  it('tracks a sub-agent with its current tool, counts and outcome', () => {
    let s = run([
      ev.start(0),
      ev.tool(1, 'task1', 'Task', { description: 'scan' }),
      ev.agent(1, 'task1', 'scan'),
    ]);
    s = run([ev.agentTool(2, 'task1', 'g1', 'Grep', { pattern: 'foo' }), ev.agentTool(2, 'task1', 'g2')], s);
    s = reduce(s, ev.agentToolDone(3, 'task1', 'g1', true));
    const row = s.subagents[0];
    expect(row?.running.map((t) => t.id)).toEqual(['g2']);
    expect([row?.toolCount, row?.errorCount]).toEqual([2, 1]);
    s = reduce(s, ev.agentEnd(4, 'task1', 'killed'));
    expect(s.subagents[0]?.status).toBe('killed');
    expect(s.subagents[0]?.running).toEqual([]);
  });

  it('keeps a sub-agent running after its turn ended, and still applies its events', () => {
    let s = run([ev.start(0), ev.agent(1, 'bg'), ev.end(2)]);
    expect(isActive(s)).toBe(true);
    s = run([ev.agentTool(3, 'bg', 'r1', 'Read', { file_path: 'a.ts' }), ev.agentEnd(9, 'bg')], s);
    expect(s.subagents[0]?.toolCount).toBe(1);
    expect(s.subagents[0]?.status).toBe('success');
    expect(isActive(s)).toBe(false);
  });

  it('recognises a nested spawn by the Task call of its parent sub-agent', () => {
    const s = run([
      ev.start(0),
      ev.agent(1, 'outer'),
      ev.agentTool(2, 'outer', 'inner', 'Task', { description: 'dig deeper' }),
      ev.agent(3, 'inner', 'dig deeper'),
    ]);
    expect(s.subagents.find((r) => r.id === 'inner')?.parentId).toBe('outer');
  });

  it('makes up a row for an agent whose start was lost, and names it when the start comes late', () => {
    let s = run([ev.start(0), ev.agentTool(1, 'ghost', 'x1')]);
    expect(s.subagents[0]?.description).toBe('');
    s = reduce(s, ev.agent(2, 'ghost', 'late start'));
    expect(s.subagents).toHaveLength(1);
    expect(s.subagents[0]?.description).toBe('late start');
  });

  it('hands running sub-agents over to the next card and marks them moved on the old one', () => {
    const old = run([ev.start(0), ev.agent(1, 'a'), ev.agent(1, 'b'), ev.agentEnd(2, 'b')]);
    const { from, to } = handOver(closeCard(old, 3, 'superseded'), run([ev.start(3)]));
    expect(from.subagents.map((r) => r.status)).toEqual(['moved', 'success']);
    expect(to.subagents.map((r) => r.id)).toEqual(['a']);
  });
});
