/**
 * The reply machine as tables on a manual clock: each test feeds inputs stamped with the clock's time to
 * the pure core, answers its operations as a scripted Telegram would, and asserts the actions — which
 * message each edit, send and delete aims at, with what, and when drafts go. No HTTP, no timers.
 */
import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import {
  type Content,
  initialReply,
  type Outcome,
  type ReplyAction,
  type ReplyInit,
  type ReplyInput,
  type ReplyState,
  stepReply,
} from '../../src/core/reply/reply.js';
import { TELEGRAM_FORMAT } from '../../src/io/reply/reply.js';

/** An operation as Telegram saw it, for the tables. */
type Call =
  | { at: number; op: 'draft'; content: Content }
  | { at: number; op: 'edit'; id: number; content: Content }
  | { at: number; op: 'send'; slot: number; content: Content; replyTo: boolean }
  | { at: number; op: 'delete'; id: number };

/**
 * The core driven as the shell drives it, over a scripted Telegram: every `lane` is granted at once,
 * every call answered by `answer` (default `ok`, sends get ids from 100 up).
 */
function machine(init: Partial<ReplyInit> & Pick<ReplyInit, 'mode'>) {
  const clock = new ManualClock(0);
  let state: ReplyState = initialReply({ format: TELEGRAM_FORMAT, ids: [], ...init });
  let wakeAt: number | undefined;
  let rich = true;
  let nextId = 100;
  const calls: Call[] = [];
  const actions: ReplyAction[] = [];
  const script: ((call: Call) => Outcome | undefined)[] = [];
  /** Operations answered later by `answerHeld` (a call still in flight). */
  const held: { seq: number; call: Call }[] = [];
  let holding = false;

  const answerOf = (call: Call): Outcome => {
    for (let i = 0; i < script.length; i++) {
      const outcome = script[i]?.(call);
      if (outcome) {
        script.splice(i, 1);
        if (outcome.kind === 'missing') rich = false; // the shell tells the factory first
        return outcome;
      }
    }
    return call.op === 'send' ? { kind: 'ok', messageId: nextId++ } : { kind: 'ok' };
  };

  const feed = (input: ReplyInput): void => {
    const result = stepReply(state, input, { now: clock.now(), draftDelay: 0, rich });
    state = result.state;
    wakeAt = result.wakeAt;
    actions.push(...result.actions);
    for (const action of result.actions) {
      const at = clock.now();
      let call: Call | undefined;
      if (action.kind === 'lane') feed({ kind: 'granted', seq: action.seq });
      else if (action.kind === 'draft') call = { at, op: 'draft', content: action.content };
      else if (action.kind === 'edit')
        call = { at, op: 'edit', id: action.messageId, content: action.content };
      else if (action.kind === 'send')
        call = { at, op: 'send', slot: action.slot, content: action.content, replyTo: action.replyTo };
      else if (action.kind === 'delete') call = { at, op: 'delete', id: action.messageId };
      if (!call || !('seq' in action)) continue;
      calls.push(call);
      if (holding) held.push({ seq: action.seq, call });
      else feed({ kind: 'outcome', seq: action.seq, outcome: answerOf(call) });
    }
  };

  return {
    feed,
    calls,
    actions,
    script,
    get state() {
      return state;
    },
    get wakeAt() {
      return wakeAt;
    },
    /** Moves the clock, ticking the machine at each wake-up on the way. */
    advance(ms: number): void {
      const until = clock.now() + ms;
      while (wakeAt !== undefined && wakeAt <= until) {
        clock.advance(wakeAt - clock.now());
        feed({ kind: 'tick' });
      }
      clock.advance(until - clock.now());
    },
    /** From now on calls stay in flight until `release`. */
    hold(): void {
      holding = true;
    },
    release(): void {
      holding = false;
      for (const { seq, call } of held.splice(0)) feed({ kind: 'outcome', seq, outcome: answerOf(call) });
    },
    persisted: () => actions.filter((a) => a.kind === 'persist').map((a) => [...a.ids]),
    warnings: () => actions.flatMap((a) => (a.kind === 'warn' ? [a.event] : [])),
    done: () => actions.find((a) => a.kind === 'done'),
  };
}

const kinds = (calls: readonly Call[]) =>
  calls.map((c) =>
    c.op === 'edit'
      ? `edit ${c.id} ${c.content.kind}`
      : c.op === 'send'
        ? `send @${c.slot} ${c.content.kind}`
        : c.op === 'delete'
          ? `delete ${c.id}`
          : `draft ${c.content.kind}`,
  );

describe('drafts', () => {
  it('a draft is sent again every 20 s while a long tool phase changes nothing, so it never expires', () => {
    const m = machine({ mode: 'draft' });
    m.feed({ kind: 'thinking' });
    m.feed({ kind: 'text', text: 'Let me look at the logs.' });
    m.advance(600);
    // A tool runs for 65 s: no new text.
    m.advance(65_000);
    expect(
      m.calls.map((c) => [c.at, c.op, 'content' in c && c.content.kind === 'rich' ? 'words' : 'thinking']),
    ).toEqual([
      [0, 'draft', 'thinking'],
      [600, 'draft', 'words'],
      [20_600, 'draft', 'words'],
      [40_600, 'draft', 'words'],
      [60_600, 'draft', 'words'],
    ]);
    // New text after the phase goes at once, not at the next refresh.
    m.feed({ kind: 'text', text: 'Let me look at the logs. Found it.' });
    expect(m.calls.at(-1)?.at).toBe(65_600);
    expect(m.wakeAt).toBe(65_600 + 20_000);
  });

  it('a press of stop mid-draft ends the drafts and the timer; finish still sends the text once', () => {
    const m = machine({ mode: 'draft' });
    m.feed({ kind: 'text', text: 'The first half' });
    m.hold();
    m.advance(700);
    m.feed({ kind: 'text', text: 'The first half and' });
    m.advance(700); // the draft is still in flight: no second one
    expect(m.calls.filter((c) => c.op === 'draft')).toHaveLength(2);
    m.feed({ kind: 'stop' });
    m.release();
    expect(m.wakeAt).toBeUndefined();
    m.feed({ kind: 'text', text: 'The first half and more' });
    m.advance(60_000);
    expect(m.calls.filter((c) => c.op === 'draft')).toHaveLength(2);
    m.feed({ kind: 'finish', markdown: 'The first half and more\n\n⏹ Stopped.' });
    expect(kinds(m.calls.slice(2))).toEqual(['send @0 rich']);
    expect(m.calls.at(-1)).toMatchObject({ replyTo: true });
    expect(m.persisted()).toEqual([[100]]);
    expect(m.done()).toEqual({ kind: 'done', ok: true });
  });

  it('a rich draft Telegram refuses (half-written Markdown) goes out as plain text at once', () => {
    const m = machine({ mode: 'draft' });
    m.script.push((c) =>
      c.op === 'draft' && c.content.kind === 'rich' ? { kind: 'rich_refused' } : undefined,
    );
    m.feed({ kind: 'text', text: '<details>open' });
    expect(m.calls.map((c) => [c.at, c.op, 'content' in c ? c.content.kind : undefined])).toEqual([
      [0, 'draft', 'rich'],
      [0, 'draft', 'plain'],
    ]);
  });
});

describe('the final render: one place loop', () => {
  it('falls back from rich to HTML to plain text on the same message, never a second one', () => {
    const m = machine({ mode: 'edit', ids: [42] });
    m.script.push((c) =>
      c.op === 'edit' && c.content.kind === 'rich' ? { kind: 'rich_refused', error: '400 rich' } : undefined,
    );
    m.script.push((c) =>
      c.op === 'edit' && c.content.kind === 'html'
        ? { kind: 'html_refused', error: "400 can't parse entities" }
        : undefined,
    );
    m.feed({ kind: 'finish', markdown: 'Some **bold** text' });
    expect(kinds(m.calls)).toEqual(['edit 42 rich', 'edit 42 html', 'edit 42 plain']);
    expect(m.calls.at(-1)).toMatchObject({ content: { kind: 'plain', text: 'Some bold text' } });
    expect(m.warnings()).toEqual(['rich_refused', 'stream_html_rejected']);
    expect(m.persisted()).toEqual([]);
    expect(m.state.ids).toEqual([42]);
    expect(m.done()).toEqual({ kind: 'done', ok: true });
  });

  it('"method not found" on the final send re-plans the same slot as HTML (the server lacks rich messages)', () => {
    const m = machine({ mode: 'draft' });
    m.script.push((c) => (c.op === 'send' && c.content.kind === 'rich' ? { kind: 'missing' } : undefined));
    m.feed({ kind: 'finish', markdown: 'First **answer**' });
    expect(kinds(m.calls)).toEqual(['send @0 rich', 'send @0 html']);
    expect(m.persisted()).toEqual([[100]]);
  });

  it('a message the user deleted is sent again at its slot', () => {
    const m = machine({ mode: 'classic', ids: [7] });
    m.script.push((c) => (c.op === 'edit' ? { kind: 'gone' } : undefined));
    m.feed({ kind: 'finish', markdown: 'answer' });
    expect(kinds(m.calls)).toEqual(['edit 7 html', 'send @0 html']);
    expect(m.persisted()).toEqual([[], [100]]);
  });

  it('splits at 4096 characters (HTML) and deletes the surplus live messages, last first', () => {
    const m = machine({ mode: 'classic', ids: [1, 2, 3] });
    const text = Array.from({ length: 120 }, (_, i) => `Line ${i} ${'x'.repeat(50)}`).join('\n');
    expect(text.length).toBeGreaterThan(4096);
    expect(text.length).toBeLessThan(8192);
    m.feed({ kind: 'finish', markdown: text });
    expect(kinds(m.calls)).toEqual(['edit 1 html', 'edit 2 html', 'delete 3']);
    expect(m.persisted()).toEqual([[1, 2]]);
    expect(m.done()).toEqual({ kind: 'done', ok: true });
  });

  it('splits at 32,768 characters (rich): the slot of a deleted message takes the next one, the rest deleted', () => {
    const m = machine({ mode: 'edit', ids: [10, 11, 12, 13] });
    const text = Array.from({ length: 900 }, (_, i) => `Paragraph ${i}: ${'words '.repeat(6)}`).join('\n\n');
    expect(text.length).toBeGreaterThan(32_768);
    expect(text.length).toBeLessThan(2 * 32_768);
    m.script.push((c) => (c.op === 'edit' && c.id === 11 ? { kind: 'gone' } : undefined));
    m.feed({ kind: 'finish', markdown: text });
    expect(kinds(m.calls)).toEqual(['edit 10 rich', 'edit 11 rich', 'edit 12 rich', 'delete 13']);
    expect(m.persisted()).toEqual([
      [10, 12, 13],
      [10, 12],
    ]);
    expect(
      m.calls.every(
        (c) => c.op !== 'edit' || c.content.kind !== 'rich' || c.content.markdown.length <= 32_768,
      ),
    ).toBe(true);
  });

  it('a rich continuation is a new message at slot 1, not a reply to the opener', () => {
    const m = machine({ mode: 'draft' });
    const text = Array.from({ length: 900 }, (_, i) => `Paragraph ${i}: ${'words '.repeat(6)}`).join('\n\n');
    m.feed({ kind: 'finish', markdown: text });
    expect(kinds(m.calls)).toEqual(['send @0 rich', 'send @1 rich']);
    expect(m.calls.map((c) => c.op === 'send' && c.replyTo)).toEqual([true, false]);
    expect(m.persisted()).toEqual([[100], [100, 101]]);
  });

  it('a failed final call ends the render with an error, and nothing after it', () => {
    const m = machine({ mode: 'edit', ids: [5] });
    m.script.push(() => ({ kind: 'failed', error: '429 Too Many Requests' }));
    m.feed({ kind: 'finish', markdown: 'x' });
    m.feed({ kind: 'text', text: 'late' });
    expect(kinds(m.calls)).toEqual(['edit 5 rich']);
    expect(m.done()).toEqual({ kind: 'done', ok: false });
    expect(m.warnings()).toEqual(['stream_final_failed']);
  });
});

describe('live edits', () => {
  it('classic live text continues in a new message past 4096 characters, its id persisted', () => {
    const m = machine({ mode: 'classic', ids: [1] });
    m.feed({ kind: 'text', text: 'a'.repeat(3000) });
    m.feed({ kind: 'text', text: `${'a'.repeat(3000)}\n\n${'b'.repeat(3000)}` });
    expect(kinds(m.calls)).toEqual(['edit 1 plain', 'edit 1 plain', 'send @1 plain']);
    expect(m.persisted()).toEqual([[1, 100]]);
  });

  it('finish replaces a live call still queued, and waits for one in flight', () => {
    const m = machine({ mode: 'edit', ids: [3] });
    const r = stepReply(m.state, { kind: 'text', text: 'hello' }, { now: 0, draftDelay: 0, rich: true });
    expect(r.actions).toEqual([{ kind: 'lane', seq: 1, priority: 'stream', replaces: true }]);
    const f = stepReply(
      r.state,
      { kind: 'finish', markdown: 'hello' },
      { now: 0, draftDelay: 0, rich: true },
    );
    expect(f.actions).toEqual([{ kind: 'lane', seq: 2, priority: 'content', replaces: true }]);
    // The replaced call's grant or drop (if it ever came) is stale.
    expect(stepReply(f.state, { kind: 'dropped', seq: 1 }, { now: 0, draftDelay: 0, rich: true }).state).toBe(
      f.state,
    );
    expect(stepReply(f.state, { kind: 'granted', seq: 1 }, { now: 0, draftDelay: 0, rich: true }).state).toBe(
      f.state,
    );
  });

  it('a live call the courier drops unrun (shutdown) is not queued again until the text changes', () => {
    const env = { now: 0, draftDelay: 0, rich: true };
    const m = machine({ mode: 'classic', ids: [3] });
    const r = stepReply(m.state, { kind: 'text', text: 'hello' }, env);
    const d = stepReply(r.state, { kind: 'dropped', seq: 1 }, env);
    expect(d.actions).toEqual([]);
    expect(d.state.op).toBeUndefined();
    expect(stepReply(d.state, { kind: 'text', text: 'hello there' }, env).actions).toEqual([
      { kind: 'lane', seq: 2, priority: 'stream', replaces: true },
    ]);
  });
});

describe('a group reply with no placeholder', () => {
  const env = { now: 0, draftDelay: 0, rich: true };

  it('sends its first message when the first text is ready (as content), then streams edits of it', () => {
    const m = machine({ mode: 'edit', ids: [] });
    const first = stepReply(m.state, { kind: 'text', text: 'hello' }, env);
    expect(first.actions).toEqual([{ kind: 'lane', seq: 1, priority: 'content', replaces: true }]);
    m.feed({ kind: 'text', text: 'hello' });
    m.feed({ kind: 'text', text: 'hello there' });
    m.feed({ kind: 'finish', markdown: 'hello there, all done' });
    expect(kinds(m.calls)).toEqual(['send @0 rich', 'edit 100 rich', 'edit 100 rich']);
    // The live first message replies to the message that opened the turn, as the final one would.
    expect(m.calls[0]).toMatchObject({ op: 'send', replyTo: true });
    expect(m.persisted()).toEqual([[100]]);
  });

  it('a final text its live message shows already costs no edit (a fast answer: one call in all)', () => {
    const m = machine({ mode: 'edit', ids: [] });
    m.feed({ kind: 'text', text: 'the whole answer' });
    m.feed({ kind: 'finish', markdown: 'the whole answer' });
    expect(kinds(m.calls)).toEqual(['send @0 rich']);
    expect(m.actions.filter((a) => a.kind === 'done')).toEqual([{ kind: 'done', ok: true }]);
  });

  it('a live edit that failed is not taken as shown: the final render still edits (the soak lost an answer)', () => {
    const m = machine({ mode: 'edit', ids: [] });
    m.feed({ kind: 'text', text: 'the first words' });
    // The live edit that carries the whole text fails (Telegram 5xx, or its answer lost, then refused).
    m.script.push((c) => (c.op === 'edit' ? { kind: 'failed', error: 'Bad Gateway' } : undefined));
    m.feed({ kind: 'text', text: 'the first words and the rest' });
    m.feed({ kind: 'finish', markdown: 'the first words and the rest' });
    expect(kinds(m.calls)).toEqual(['send @0 rich', 'edit 100 rich', 'edit 100 rich']);
    expect(m.actions.filter((a) => a.kind === 'done')).toEqual([{ kind: 'done', ok: true }]);
  });

  it('a turn that ends before its first send goes out is sent once, final', () => {
    const r = stepReply(
      initialReply({ format: TELEGRAM_FORMAT, ids: [], mode: 'edit' }),
      { kind: 'text', text: 'hi' },
      env,
    );
    const f = stepReply(r.state, { kind: 'finish', markdown: 'hi, and done' }, env);
    // The final call takes the queued live call's place (same key): one send, the final text.
    expect(f.actions).toEqual([{ kind: 'lane', seq: 2, priority: 'content', replaces: true }]);
    const g = stepReply(f.state, { kind: 'granted', seq: 2 }, env);
    expect(g.actions).toEqual([
      { kind: 'send', seq: 2, slot: 0, content: { kind: 'rich', markdown: 'hi, and done' }, replyTo: true },
    ]);
  });
});
