/**
 * The reply machine as tables on a manual clock: each test feeds inputs stamped with the clock's time to
 * the pure core, answers its operations as a scripted Telegram would, and asserts the actions — which
 * message each edit, send and delete aims at, with what, and when drafts go. No HTTP, no timers.
 */
import { ManualClock, silentLogger } from '@switchyard/protocol';
import { GrammyError, HttpError } from 'grammy';
import { describe, expect, it } from 'vitest';
import { createBudget } from '../../src/budget.js';
import {
  type Content,
  initialReply,
  type Outcome,
  type ReplyAction,
  type ReplyInit,
  type ReplyInput,
  type ReplyState,
  stepReply,
} from '../../src/core/reply.js';
import { createCourier } from '../../src/courier.js';
import { createReplies } from '../../src/replies.js';
import { TELEGRAM_FORMAT } from '../../src/reply-shell.js';
import { createSendJournal } from '../../src/send-journal.js';
import { openGatewayStore } from '../../src/store.js';

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
    expect(r.actions).toEqual([{ kind: 'lane', seq: 1, priority: 'low', replaces: true }]);
    const f = stepReply(
      r.state,
      { kind: 'finish', markdown: 'hello' },
      { now: 0, draftDelay: 0, rich: true },
    );
    expect(f.actions).toEqual([{ kind: 'lane', seq: 2, priority: 'normal', replaces: true }]);
    // The replaced call's grant (if it ever came) is stale.
    expect(stepReply(f.state, { kind: 'granted', seq: 1 }, { now: 0, draftDelay: 0, rich: true }).state).toBe(
      f.state,
    );
  });
});

describe('the shell over the send journal', () => {
  it('a lost sendRichMessage answer is found by the journal and adopted: one message, its id persisted in the send', async () => {
    const clock = new ManualClock(1_000);
    const store = openGatewayStore(':memory:');
    try {
      store.upsertTurn({ turnId: 't', route: { chatId: 1 }, request: '', startedAt: 0 });
      const chat = new Map<number, string>();
      let next = 1;
      let sends = 0;
      const refuse = (description: string) =>
        new GrammyError('call failed', { ok: false, error_code: 400, description }, 'editMessageText', {});
      const api = {
        sendRichMessage: async (_c: number, rich: { markdown: string }) => {
          sends++;
          chat.set(next++, rich.markdown);
          throw new HttpError('Network request failed', new Error('socket hang up'));
        },
        editMessageText: async (_c: number, id: number, content: { markdown: string }) => {
          if (!chat.has(id)) throw refuse('Bad Request: message to edit not found');
          if (chat.get(id) === content.markdown) throw refuse('Bad Request: message is not modified');
          return true;
        },
        sendMessageDraft: async () => true,
        sendRichMessageDraft: async () => true,
        deleteMessage: async () => true,
        sendMessage: async () => {
          throw new Error('not used');
        },
      };
      const courier = createCourier(createBudget(), clock);
      const journal = createSendJournal({ api: api as never, store, courier, logger: silentLogger });
      const inSend: boolean[] = [];
      const persisting = {
        setTurnMessages: (turnId: string, ids: readonly number[]) => {
          inSend.push(store.pendingSends().length > 0); // the send's row is still open: same transaction
          store.setTurnMessages(turnId, [...ids]);
        },
      };
      const replies = createReplies({
        api: api as never,
        journal,
        courier,
        store: persisting,
        logger: silentLogger,
        clock,
      });
      const reply = replies.stream({ turnId: 't', route: { chatId: 1 } }, [], 9);
      await reply.finish('An answer whose send loses its reply');
      expect(sends).toBe(1);
      expect(chat.size).toBe(1);
      expect(store.getTurn('t')?.messageIds).toEqual([1]);
      expect(inSend).toEqual([true]);
      expect(reply.messageIds).toEqual([1]);
    } finally {
      store.close();
    }
  });

  it('"method not found" is learnt once per gateway: later replies are classic and nothing tries rich again', async () => {
    const clock = new ManualClock(0);
    const missing = new GrammyError(
      'call failed',
      { ok: false, error_code: 404, description: 'Not Found: method not found' },
      'sendRichMessageDraft',
      {},
    );
    const calls: string[] = [];
    const api = {
      sendRichMessageDraft: async () => {
        calls.push('sendRichMessageDraft');
        throw missing;
      },
      sendMessageDraft: async () => {
        calls.push('sendMessageDraft');
        return true;
      },
      editMessageText: async () => {
        calls.push('editMessageText');
        return true;
      },
      deleteMessage: async () => true,
    };
    let id = 70;
    const journal = {
      send: async (_c: number, _t: string, _o: unknown, owned?: { adopt(id: number): void }) => {
        calls.push('send');
        owned?.adopt(id);
        return { message_id: id++ } as never;
      },
      sendRich: async () => {
        calls.push('sendRich');
        throw missing;
      },
    };
    const warnings: string[] = [];
    const logger = {
      ...silentLogger,
      warn: (fields: { event?: string }) => warnings.push(String(fields.event)),
      child: () => logger,
    } as never;
    const replies = createReplies({
      api: api as never,
      journal,
      courier: createCourier(createBudget(), clock),
      store: { setTurnMessages: () => {} },
      logger,
      clock,
    });
    const route = { chatId: 1 };
    expect(replies.mode(route)).toBe('draft');
    const first = replies.stream({ turnId: 'a', route }, [], 5);
    first.show(() => 'First **answer**');
    await clock.advanceAsync(0);
    expect(replies.mode(route)).toBe('classic');
    await clock.advanceAsync(5_000);
    const done = first.finish('First **answer**');
    await clock.advanceAsync(5_000);
    await done;
    const second = replies.stream({ turnId: 'b', route }, [80]);
    second.show(() => 'Second');
    const finished = second.finish('Second');
    await clock.advanceAsync(5_000);
    await finished;
    expect(second.notesInline).toBe(false);
    expect(calls.filter((c) => c.startsWith('sendRich'))).toEqual(['sendRichMessageDraft']);
    expect(warnings.filter((w) => w === 'rich_missing')).toHaveLength(1);
    expect(calls).toContain('send');
  });
});
