/**
 * The turn machine's rules as tables on a manual clock (`core/turn-machine.ts`), through a stand-in
 * shell (`turn-sim.ts`): every marker the model read ends with its final text, however the bursts,
 * the placeholder sends' answers and the bridge's connection interleave, and the machine forgets every
 * entry once its turn is rendered.
 */
import { describe, expect, it } from 'vitest';
import { PLACEHOLDER, unreadText } from '../../src/core/marker-text.js';
import { TurnSim } from './turn-sim.js';

const groups = [{ chatId: -101 }, { chatId: -102 }, { chatId: -103 }];

describe('bursts across chats during a turn', () => {
  it.each<['fifo' | 'lifo' | 'at once']>([['at once'], ['fifo'], ['lifo']])(
    'three chats × eight messages, placeholder sends answered %s: every marker ends final, nothing owed, nothing held',
    (order) => {
      const sim = new TurnSim();
      sim.holdSends = order !== 'at once';
      for (const route of groups) {
        const c = route.chatId;
        sim.message(route, `${c}-1`);
        sim.started(`${c}-t1`, route, [`${c}-1`]);
      }
      // Seven more per chat, interleaved across the chats, while every first turn runs.
      for (let i = 2; i <= 8; i++) for (const route of groups) sim.message(route, `${route.chatId}-${i}`);
      for (const route of groups) {
        const c = route.chatId;
        // The model reads 2 and 3 as steers of its turn, then answers; 4 opens the next turn with 5–8.
        sim.frame({ type: 'message_taken', turnId: `${c}-t1`, inboundIds: [`${c}-2`, `${c}-3`] });
        sim.answer(`${c}-t1`, `answer ${c} one`);
        sim.started(`${c}-t2`, route, [`${c}-4`, `${c}-5`, `${c}-6`, `${c}-7`, `${c}-8`]);
        sim.answer(`${c}-t2`, `answer ${c} two`);
      }
      if (order !== 'at once') sim.answerSends(order);
      for (const route of groups) {
        const c = route.chatId;
        expect([1, 2, 3, 4, 5, 6, 7, 8].map((i) => sim.marker(`${c}-${i}`))).toEqual([
          `answer ${c} one`,
          PLACEHOLDER.taken,
          PLACEHOLDER.taken,
          `answer ${c} two`,
          PLACEHOLDER.merged,
          PLACEHOLDER.merged,
          PLACEHOLDER.merged,
          PLACEHOLDER.merged,
        ]);
      }
      expect(sim.owed()).toEqual([]);
      expect(sim.machine.size()).toBe(0);
    },
  );

  it('marker edits held in flight: a newer due text waits for the edit before it, one edit per marker at a time', () => {
    const sim = new TurnSim();
    const route = groups[0] ?? { chatId: -1 };
    sim.message(route, 'a');
    sim.started('t', route, ['a']);
    sim.message(route, 'b');
    sim.holdEdits = true;
    sim.frame({ type: 'session_waiting', route, inboundIds: ['b'], position: 0 });
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['b'] });
    expect(sim.heldEdits.map((e) => e.text)).toEqual([PLACEHOLDER.waiting]);
    sim.answerEdits();
    expect(sim.heldEdits.map((e) => e.text)).toEqual([PLACEHOLDER.taken]);
    sim.answerEdits();
    expect(sim.marker('b')).toBe(PLACEHOLDER.taken);
  });
});

describe('a steer written between a request and its answer', () => {
  it('is marked "will be read", then "taken" when the bridge says so, even before its send returned', () => {
    const sim = new TurnSim();
    const route = { chatId: -7 };
    sim.message(route, 'q');
    sim.started('t', route, ['q']);
    sim.holdSends = true;
    sim.message(route, 'steer');
    expect(sim.heldSends.map((s) => s.text)).toEqual([PLACEHOLDER.steer]);
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['steer'] });
    sim.answerSends();
    expect(sim.marker('steer')).toBe(PLACEHOLDER.taken);
    sim.answer('t', 'the answer');
    expect(sim.marker('q')).toBe('the answer');
    expect(sim.marker('steer')).toBe(PLACEHOLDER.taken);
    expect(sim.machine.size()).toBe(0);
  });

  it('a steer the model did not read opens the next turn: its marker becomes that reply', () => {
    const sim = new TurnSim();
    const route = { chatId: -8 };
    sim.message(route, 'q');
    sim.started('t', route, ['q']);
    sim.message(route, 'steer');
    sim.answer('t', 'one');
    sim.started('t2', route, ['steer']);
    // The bridge may report the opening message taken too: it keeps its reply.
    sim.frame({ type: 'message_taken', turnId: 't2', inboundIds: ['steer'] });
    expect(sim.marker('steer')).toBe(PLACEHOLDER.reply);
    sim.answer('t2', 'two');
    expect(sim.marker('steer')).toBe('two');
    expect(sim.owed()).toEqual([]);
    expect(sim.machine.size()).toBe(0);
  });
});

describe('the bridge gone and back in the middle of a burst', () => {
  it('messages while it is away wait silently; back within the grace they get the normal path', () => {
    const sim = new TurnSim();
    const route = { chatId: -9 };
    sim.message(route, 'm1');
    sim.started('t', route, ['m1']);
    sim.message(route, 'm2');
    sim.bridge(false);
    sim.message(route, 'm3');
    sim.message(route, 'm4');
    sim.clock.advance(1000);
    expect(sim.actions('send_placeholder').map((s) => s.inboundId)).toEqual(['m1', 'm2']);
    sim.bridge(true);
    // The turn still runs: they are steers. The restarted bridge starts its turn again (ignored) and
    // reports what the model read.
    expect(sim.actions('send_placeholder').map((s) => s.text)).toEqual([
      PLACEHOLDER.reply,
      PLACEHOLDER.steer,
      PLACEHOLDER.steer,
      PLACEHOLDER.steer,
    ]);
    sim.started('t', route, ['m1']);
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['m2', 'm3', 'm4'] });
    sim.answer('t', 'answer');
    expect(['m1', 'm2', 'm3', 'm4'].map((id) => sim.marker(id))).toEqual([
      'answer',
      PLACEHOLDER.taken,
      PLACEHOLDER.taken,
      PLACEHOLDER.taken,
    ]);
    expect(sim.machine.size()).toBe(0);
  });

  it('away longer than the grace: "queued"; the restarted bridge reads them as a new turn, and every marker ends final', () => {
    const sim = new TurnSim();
    const route = { chatId: -10 };
    sim.message(route, 'm1');
    sim.started('t', route, ['m1']);
    sim.bridge(false);
    // The old turn is lost with the bridge: it ends interrupted when the bridge reports it.
    sim.message(route, 'm2');
    sim.message(route, 'm3');
    sim.clock.advance(3000);
    expect(sim.marker('m2')).toBe(PLACEHOLDER.queued);
    sim.bridge(true);
    sim.frame({ type: 'turn_ended', turnId: 't', outcome: 'interrupted' });
    sim.started('t2', route, ['m2', 'm3']);
    sim.answer('t2', 'both');
    expect(['m2', 'm3'].map((id) => sim.marker(id))).toEqual(['both', PLACEHOLDER.merged]);
    expect(sim.owed()).toEqual([]);
    expect(sim.machine.size()).toBe(0);
  });
});

describe('the start-up grace', () => {
  it('a message in the first moment after start waits, then takes the normal path (a draft, no notice)', () => {
    const sim = new TurnSim();
    sim.connected = false;
    const route = { chatId: 42 };
    sim.message(route, 'hello');
    expect(sim.log).toEqual([]);
    sim.clock.advance(20);
    sim.bridge(true);
    expect(sim.actions('thinking').map((a) => a.inboundId)).toEqual(['hello']);
    expect(sim.actions('send_placeholder')).toEqual([]);
    sim.started('t', route, ['hello']);
    // Grown as a draft, with no second "Thinking…": its arrival showed one.
    expect(sim.actions('open')).toMatchObject([{ messageIds: [], thinking: false, opener: 1 }]);
    sim.answer('t', 'hi');
    expect(sim.machine.size()).toBe(0);
  });

  it('only a wait longer than the grace says the agent is restarting', () => {
    const sim = new TurnSim();
    sim.connected = false;
    sim.message({ chatId: 42 }, 'hello');
    sim.clock.advance(2999);
    expect(sim.log).toEqual([]);
    sim.clock.advance(1);
    expect(sim.actions('send_placeholder').map((a) => a.text)).toEqual([PLACEHOLDER.queued]);
  });

  it('the bridge opens the turn while the message still waits: it is that turn’s, acknowledged at once', () => {
    const sim = new TurnSim();
    sim.connected = false;
    const route = { chatId: -3 };
    sim.message(route, 'm');
    sim.holdSends = true;
    sim.started('t', route, ['m']);
    expect(sim.actions('send_placeholder').map((a) => a.text)).toEqual([PLACEHOLDER.reply]);
    expect(sim.actions('open')).toEqual([]);
    sim.answerSends();
    expect(sim.actions('open')).toMatchObject([{ messageIds: [100] }]);
  });
});

describe('a lost placeholder send answer', () => {
  it('a send that failed: its turn opens without it, and nothing is held after the render', () => {
    const sim = new TurnSim();
    const route = { chatId: -11 };
    sim.holdSends = true;
    sim.message(route, 'm');
    sim.started('t', route, ['m']);
    sim.answer('t', 'answer');
    expect(sim.actions('open')).toEqual([]);
    sim.answerSends('fifo', 'failed');
    expect(sim.actions('open')).toMatchObject([{ messageIds: [] }]);
    expect(sim.actions('finish')).toHaveLength(1);
    expect(sim.machine.size()).toBe(0);
  });

  it('a send the journal found after all: the turn names it as its first message in the same step', () => {
    const sim = new TurnSim();
    const route = { chatId: -12 };
    sim.holdSends = true;
    sim.message(route, 'm');
    sim.started('t', route, ['m']);
    const [send] = sim.heldSends.splice(0);
    if (!send) throw new Error('no send');
    const step = sim.machine.input({
      type: 'placeholder_sent',
      inboundId: 'm',
      messageId: 77,
      at: sim.clock.now(),
    });
    expect(step.writes).toEqual([
      { kind: 'placeholder', inboundId: 'm', messageId: 77, placeholderKind: 'reply' },
      { kind: 'turn_messages', turnId: 't', messageIds: [77] },
    ]);
    expect(step.actions).toMatchObject([{ kind: 'open', messageIds: [77] }]);
  });
});

describe('bookkeeping', () => {
  it('turn_started is one step: the turn, the messages it takes, its placeholder and the markers owed', () => {
    const sim = new TurnSim();
    const route = { chatId: -13 };
    sim.message(route, 'a');
    sim.message(route, 'b');
    const step = sim.machine.input({
      type: 'frame',
      frame: { type: 'turn_started', turnId: 't', route, inboundIds: ['a', 'b'], request: 'r', startedAt: 0 },
      inbound: [],
      turn: undefined,
      drafts: false,
      at: sim.clock.now(),
    });
    expect(step.writes.map((w) => w.kind)).toEqual(['turn', 'inbound_state', 'marker_due', 'turn_messages']);
  });

  it('a refused marker edit is made by the sweep after the retry interval, then nothing is owed', () => {
    const sim = new TurnSim();
    const route = { chatId: -14 };
    sim.message(route, 'a');
    sim.started('t', route, ['a']);
    sim.message(route, 'b');
    sim.failEdits = 1;
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['b'] });
    expect(sim.marker('b')).toBe(PLACEHOLDER.steer);
    expect(sim.owed()).toEqual(['b']);
    sim.answer('t', 'done');
    expect(sim.machine.size()).toBe(0);
    sim.clock.advance(15_000);
    expect(sim.marker('b')).toBe(PLACEHOLDER.taken);
    expect(sim.owed()).toEqual([]);
    expect(sim.machine.size()).toBe(0);
  });

  it('undo: a step whose writes the store refused is forgotten, so the frame sent again is applied', () => {
    const sim = new TurnSim();
    const route = { chatId: -15 };
    sim.message(route, 'a');
    const frame = {
      type: 'frame' as const,
      frame: {
        type: 'turn_started' as const,
        turnId: 't',
        route,
        inboundIds: ['a'],
        request: 'r',
        startedAt: 0,
      },
      inbound: [],
      turn: undefined,
      drafts: false,
    };
    sim.machine.input({ ...frame, at: sim.clock.now() });
    sim.machine.undo();
    expect(sim.machine.running(route)).toBeUndefined();
    expect(sim.machine.input({ ...frame, at: sim.clock.now() }).writes.length).toBeGreaterThan(0);
  });

  it('a turn from before a restart that ends while another runs in its lane leaves that lane busy', () => {
    const sim = new TurnSim();
    const route = { chatId: -16 };
    sim.turns.set('old', {
      turnId: 'old',
      route,
      request: 'r',
      state: 'running',
      blocks: [{ id: 'b', text: 'late' }],
      messageIds: [],
      outcome: undefined,
      error: undefined,
    });
    sim.message(route, 'a');
    sim.started('t', route, ['a']);
    sim.frame({ type: 'turn_ended', turnId: 'old', outcome: 'success' });
    expect(sim.actions('finish').map((f) => f.turnId)).toEqual(['old']);
    expect(sim.machine.running(route)).toBe('t');
    sim.message(route, 'b');
    expect(sim.actions('send_placeholder').map((a) => a.text)).toEqual([
      PLACEHOLDER.reply,
      PLACEHOLDER.steer,
    ]);
  });

  it('names what a turn has read — its opener, what was read with it and what it took in — and only that', () => {
    const sim = new TurnSim();
    const route = { chatId: -17 };
    for (const id of ['a', 'b', 'c', 'd']) sim.message(route, id);
    sim.started('t', route, ['a', 'b']);
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['c'] });
    expect(sim.machine.readIn('t').sort()).toEqual(['a', 'b', 'c']);
    expect(sim.machine.readIn('other')).toEqual([]);
  });

  it('stays bounded: 10,000 messages through 50 conversations leave nothing held', () => {
    const sim = new TurnSim();
    for (let round = 0; round < 100; round++)
      for (let chat = 1; chat <= 50; chat++) {
        const route = { chatId: -1000 - chat };
        const ids = [0, 1].map((i) => sim.message(route, `${chat}-${round}-${i}`));
        sim.started(`${chat}-${round}`, route, ids.slice(0, 1));
        sim.frame({ type: 'message_taken', turnId: `${chat}-${round}`, inboundIds: ids.slice(1) });
        sim.answer(`${chat}-${round}`, 'ok');
      }
    expect(sim.inbound.size).toBe(10_000);
    expect(sim.machine.size()).toBe(0);
    expect(sim.owed()).toEqual([]);
  });

  it('typing is renewed while a turn runs and stops with it', () => {
    const sim = new TurnSim();
    const route = { chatId: 5 };
    sim.message(route, 'a');
    sim.started('t', route, ['a']);
    sim.clock.advance(10_000);
    expect(sim.actions('typing')).toHaveLength(3);
    sim.answer('t', 'x');
    sim.clock.advance(60_000);
    expect(sim.actions('typing')).toHaveLength(3);
    expect(sim.clock.pending).toBe(0);
  });

  it('typing pauses while the turn waits for an answer, and resumes at once when it is answered (issue 31)', () => {
    const sim = new TurnSim();
    const route = { chatId: 5 };
    sim.message(route, 'a');
    sim.started('t', route, ['a']);
    sim.clock.advance(5_000);
    expect(sim.actions('typing')).toHaveLength(2);
    sim.frame({
      type: 'permission_request',
      requestId: 'r',
      turnId: 't',
      route,
      toolName: 'Write',
      summary: 'write a.md (/w/a.md)',
      input: {},
      suggestions: [],
    });
    // "typing…" while the bot waits for the user's Allow would say the bot is busy: it is not.
    sim.clock.advance(30_000);
    expect(sim.actions('typing')).toHaveLength(2);
    // The close names no turn: the machine knows whose prompt it was, and the card hears of it too (it
    // showed "Waiting for your answer" until the turn ended).
    sim.frame({ type: 'prompt_closed', requestId: 'r', reason: 'answered' });
    expect(sim.actions('typing')).toHaveLength(3);
    expect(sim.actions('card').map((a) => a.frame.type)).toContain('prompt_closed');
    sim.clock.advance(4_500);
    expect(sim.actions('typing')).toHaveLength(4);
    sim.answer('t', 'x');
    expect(sim.clock.pending).toBe(0);
  });
});

describe('a message the agent will never read', () => {
  it.each<[string, boolean]>([
    ['acknowledged as a draft', true],
    ['still waiting within the start-up grace', false],
  ])(
    'in a rich private chat, %s: it gets a marker message that says why, since no reply will show it',
    (_, connected) => {
      const sim = new TurnSim();
      sim.connected = connected;
      const route = { chatId: 42 };
      sim.message(route, 'over budget');
      expect(sim.actions('send_placeholder')).toEqual([]);
      sim.frame({
        type: 'messages_unread',
        inboundIds: ['over budget'],
        reason: 'the daily budget is spent',
      });
      expect(sim.actions('send_placeholder').map((a) => a.text)).toEqual([
        unreadText('the daily budget is spent'),
      ]);
      expect(sim.marker('over budget')).toBe(unreadText('the daily budget is spent'));
      // Nothing owed, nothing held, and no late "agent restarting" notice from the grace's timer.
      sim.clock.advance(5000);
      expect(sim.actions('send_placeholder')).toHaveLength(1);
      expect(sim.owed()).toEqual([]);
      expect(sim.machine.size()).toBe(0);
    },
  );

  it('in a group, its placeholder says why, edited in place (no second message)', () => {
    const sim = new TurnSim();
    const route = { chatId: -7 };
    sim.message(route, 'm');
    sim.frame({ type: 'messages_unread', inboundIds: ['m'], reason: 'the conversation failed' });
    expect(sim.actions('send_placeholder').map((a) => a.text)).toEqual([PLACEHOLDER.reply]);
    expect(sim.marker('m')).toBe(unreadText('the conversation failed'));
    expect(sim.machine.size()).toBe(0);
  });
});
