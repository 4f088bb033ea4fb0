/**
 * The turn machine's presentation rules as tables on a manual clock (`core/turns/turn-machine.ts`), through a
 * stand-in shell (`turn-sim.ts`): every message's state is a reaction (👀 waiting, ✍ being read, 👌
 * read) and every message the model read ends 👌, however the bursts and the bridge's connection
 * interleave; no message of the bot's own is sent for a state (only the words of one never read); the
 * answers come in turn order; and the machine forgets every entry once its turn is rendered.
 */
import { describe, expect, it } from 'vitest';
import { unreadText } from '../../src/core/turns/marker-text.js';
import { TurnSim } from './turn-sim.js';

const [WAITING, READING, READ] = ['👀', '✍', '👌'];

const groups = [{ chatId: -101 }, { chatId: -102 }, { chatId: -103 }];

describe('bursts across chats during a turn', () => {
  it.each<['groups' | 'private chats']>([['groups'], ['private chats']])(
    'three %s × eight messages: every message 👌 at the end, no message of the bot’s own, answers in order',
    (kind) => {
      const sim = new TurnSim();
      const routes = kind === 'groups' ? groups : groups.map((g) => ({ chatId: -g.chatId }));
      for (const route of routes) {
        const c = route.chatId;
        sim.message(route, `${c}-1`);
        sim.started(`${c}-t1`, route, [`${c}-1`]);
      }
      // Seven more per chat, interleaved across the chats, while every first turn runs: each waits.
      for (let i = 2; i <= 8; i++) for (const route of routes) sim.message(route, `${route.chatId}-${i}`);
      for (const route of routes) {
        const c = route.chatId;
        expect([1, 2, 3, 4, 5, 6, 7, 8].map((i) => sim.reaction(`${c}-${i}`))).toEqual([
          READING,
          ...Array(7).fill(WAITING),
        ]);
      }
      for (const route of routes) {
        const c = route.chatId;
        // The model reads 2 and 3 as steers of its turn, then answers; 4 opens the next turn with 5–8.
        sim.frame({ type: 'message_taken', turnId: `${c}-t1`, inboundIds: [`${c}-2`, `${c}-3`] });
        expect([2, 3, 4].map((i) => sim.reaction(`${c}-${i}`))).toEqual([READING, READING, WAITING]);
        sim.answer(`${c}-t1`, `answer ${c} one`);
        sim.started(`${c}-t2`, route, [`${c}-4`, `${c}-5`, `${c}-6`, `${c}-7`, `${c}-8`]);
        // Read together with the message that opened the turn: 👌 at once; the opener is being read.
        expect([4, 5, 8].map((i) => sim.reaction(`${c}-${i}`))).toEqual([READING, READ, READ]);
        sim.answer(`${c}-t2`, `answer ${c} two`);
      }
      for (const route of routes) {
        const c = route.chatId;
        expect([1, 2, 3, 4, 5, 6, 7, 8].map((i) => sim.reaction(`${c}-${i}`))).toEqual(Array(8).fill(READ));
        expect(sim.answers.filter((a) => a.startsWith(`${c}-`))).toEqual([
          `${c}-t1: answer ${c} one`,
          `${c}-t2: answer ${c} two`,
        ]);
      }
      expect(sim.actions('send_placeholder')).toEqual([]);
      expect(sim.actions('edit_marker')).toEqual([]);
      expect(sim.owed()).toEqual([]);
      expect(sim.machine.size()).toBe(0);
    },
  );

  it.each<[string, number]>([
    ['a group', -21],
    ['a private chat', 21],
  ])('between turns in %s: a message read at once gets no 👀, only ✍ then 👌', (_, chatId) => {
    const sim = new TurnSim();
    const route = { chatId };
    sim.message(route, 'a');
    sim.started('t1', route, ['a']);
    sim.answer('t1', 'one');
    // The conversation is idle again: the next messages are read at once, together.
    sim.message(route, 'b');
    sim.message(route, 'c');
    expect([sim.reaction('b'), sim.reaction('c')]).toEqual([undefined, undefined]);
    sim.started('t2', route, ['b', 'c']);
    expect([sim.reaction('b'), sim.reaction('c')]).toEqual([READING, READ]);
    sim.answer('t2', 'two');
    expect(['a', 'b', 'c'].map((id) => sim.reaction(id))).toEqual([READ, READ, READ]);
    expect(sim.actions('react').map((r) => `${r.inboundId}:${r.state}`)).toEqual([
      'a:reading',
      'a:read',
      'b:reading',
      'c:read',
      'b:read',
    ]);
    expect(sim.answers).toEqual(['t1: one', 't2: two']);
  });

  it('reactions change only with the state: waiting for a session, then taken, is 👀 then ✍, once each', () => {
    const sim = new TurnSim();
    const route = groups[0] ?? { chatId: -1 };
    sim.message(route, 'a');
    sim.started('t', route, ['a']);
    sim.message(route, 'b');
    sim.frame({ type: 'session_waiting', route, inboundIds: ['b'], position: 0 });
    sim.frame({ type: 'session_waiting', route, inboundIds: ['b'], position: 0 });
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['b'] });
    expect(
      sim
        .actions('react')
        .filter((r) => r.inboundId === 'b')
        .map((r) => r.state),
    ).toEqual(['waiting', 'reading']);
    sim.answer('t', 'done');
    expect(sim.reaction('b')).toBe(READ);
  });
});

describe('a steer written between a request and its answer', () => {
  it('shows 👀, then ✍ when the bridge says it was taken, then 👌 once the turn answered', () => {
    const sim = new TurnSim();
    const route = { chatId: -7 };
    sim.message(route, 'q');
    sim.started('t', route, ['q']);
    sim.message(route, 'steer');
    expect(sim.reaction('steer')).toBe(WAITING);
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['steer'] });
    expect(sim.reaction('steer')).toBe(READING);
    sim.answer('t', 'the answer');
    expect(sim.answers).toEqual(['t: the answer']);
    expect([sim.reaction('q'), sim.reaction('steer')]).toEqual([READ, READ]);
    expect(sim.machine.size()).toBe(0);
  });

  it('a steer the model did not read opens the next turn: ✍ for that turn, 👌 once it answered', () => {
    const sim = new TurnSim();
    const route = { chatId: -8 };
    sim.message(route, 'q');
    sim.started('t', route, ['q']);
    sim.message(route, 'steer');
    sim.answer('t', 'one');
    sim.started('t2', route, ['steer']);
    // The bridge may report the opening message taken too: it keeps its reply.
    sim.frame({ type: 'message_taken', turnId: 't2', inboundIds: ['steer'] });
    expect(sim.reaction('steer')).toBe(READING);
    sim.answer('t2', 'two');
    expect(sim.reaction('steer')).toBe(READ);
    expect(sim.answers).toEqual(['t: one', 't2: two']);
    expect(sim.owed()).toEqual([]);
    expect(sim.machine.size()).toBe(0);
  });
});

describe('the bridge gone and back in the middle of a burst', () => {
  it('a bridge restart mid-burst: messages while it is away wait silently; back within the grace, 👀 as steers', () => {
    const sim = new TurnSim();
    const route = { chatId: -9 };
    sim.message(route, 'm1');
    sim.started('t', route, ['m1']);
    sim.message(route, 'm2');
    sim.bridge(false);
    sim.message(route, 'm3');
    sim.message(route, 'm4');
    sim.clock.advance(1000);
    expect(sim.actions('react').map((s) => s.inboundId)).toEqual(['m1', 'm2']);
    sim.bridge(true);
    // The turn still runs: they are steers. The restarted bridge starts its turn again (ignored) and
    // reports what the model read.
    expect(['m1', 'm2', 'm3', 'm4'].map((id) => sim.reaction(id))).toEqual([
      READING,
      WAITING,
      WAITING,
      WAITING,
    ]);
    sim.started('t', route, ['m1']);
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['m2', 'm3', 'm4'] });
    sim.answer('t', 'answer');
    expect(['m1', 'm2', 'm3', 'm4'].map((id) => sim.reaction(id))).toEqual([READ, READ, READ, READ]);
    expect(sim.actions('send_placeholder')).toEqual([]);
    expect(sim.machine.size()).toBe(0);
  });

  it('away longer than the grace: 👀; the restarted bridge reads them as a new turn, and every message ends 👌', () => {
    const sim = new TurnSim();
    const route = { chatId: -10 };
    sim.message(route, 'm1');
    sim.started('t', route, ['m1']);
    sim.bridge(false);
    // The old turn is lost with the bridge: it ends interrupted when the bridge reports it.
    sim.message(route, 'm2');
    sim.message(route, 'm3');
    sim.clock.advance(3000);
    expect(sim.reaction('m2')).toBe(WAITING);
    sim.bridge(true);
    sim.frame({ type: 'turn_ended', turnId: 't', outcome: 'interrupted' });
    sim.started('t2', route, ['m2', 'm3']);
    expect(['m2', 'm3'].map((id) => sim.reaction(id))).toEqual([READING, READ]);
    sim.answer('t2', 'both');
    expect(['m1', 'm2', 'm3'].map((id) => sim.reaction(id))).toEqual([READ, READ, READ]);
    expect(sim.answers.at(-1)).toBe('t2: both');
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

  it('only a wait longer than the grace shows the message waiting (👀), and with no message of its own', () => {
    const sim = new TurnSim();
    sim.connected = false;
    sim.message({ chatId: 42 }, 'hello');
    sim.clock.advance(2999);
    expect(sim.log).toEqual([]);
    sim.clock.advance(1);
    expect(sim.reaction('hello')).toBe(WAITING);
    expect(sim.actions('send_placeholder')).toEqual([]);
  });

  it('the bridge opens the turn while the message still waits: it is that turn’s, acknowledged at once', () => {
    const sim = new TurnSim();
    sim.connected = false;
    const route = { chatId: -3 };
    sim.message(route, 'm');
    sim.started('t', route, ['m']);
    // No placeholder to wait for: the reply opens at once, its first message sent with its first text.
    expect(sim.actions('send_placeholder')).toEqual([]);
    expect(sim.actions('open')).toMatchObject([{ messageIds: [] }]);
    expect(sim.reaction('m')).toBe(READING);
  });
});

describe('a lost send of the words of a message not read', () => {
  it('a send that failed: nothing is held, and nothing else is sent', () => {
    const sim = new TurnSim();
    const route = { chatId: -11 };
    sim.holdSends = true;
    sim.message(route, 'm');
    sim.frame({ type: 'messages_unread', inboundIds: ['m'], reason: 'the conversation failed' });
    expect(sim.heldSends.map((a) => a.text)).toEqual([unreadText('the conversation failed')]);
    sim.answerSends('fifo', 'failed');
    expect(sim.actions('send_placeholder')).toHaveLength(1);
    expect(sim.machine.size()).toBe(0);
  });

  it('a send the journal found after all: the marker is recorded in the same step', () => {
    const sim = new TurnSim();
    const route = { chatId: -12 };
    sim.holdSends = true;
    sim.message(route, 'm');
    sim.frame({ type: 'messages_unread', inboundIds: ['m'], reason: 'the conversation failed' });
    const [send] = sim.heldSends.splice(0);
    if (!send) throw new Error('no send');
    const step = sim.machine.input({
      type: 'placeholder_sent',
      inboundId: 'm',
      messageId: 77,
      at: sim.clock.now(),
    });
    expect(step.writes[0]).toEqual({
      kind: 'placeholder',
      inboundId: 'm',
      messageId: 77,
      placeholderKind: 'unread',
    });
  });
});

describe('bookkeeping', () => {
  it('turn_started is one step: the turn and the messages it takes, and the reactions it shows', () => {
    const sim = new TurnSim();
    const route = { chatId: -13 };
    sim.message(route, 'a');
    sim.message(route, 'b');
    const step = sim.machine.input({
      type: 'frame',
      frame: { type: 'turn_started', turnId: 't', route, inboundIds: ['a', 'b'], request: 'r', startedAt: 0 },
      inbound: [],
      turn: undefined,
      presentation: 'edit' as const,
      at: sim.clock.now(),
    });
    expect(step.writes.map((w) => w.kind)).toEqual(['turn', 'inbound_state']);
    expect(step.actions.filter((a) => a.kind === 'react').map((a) => a.kind === 'react' && a.state)).toEqual([
      'reading',
      'read',
    ]);
  });

  it('a refused marker edit (a marker left by a previous version) is made by the sweep after the retry interval', () => {
    const sim = new TurnSim();
    const route = { chatId: -14 };
    sim.message(route, 'a');
    sim.started('t', route, ['a']);
    // A message whose "will be read" marker a previous version of the gateway sent before a restart.
    sim.messages.set(900, '⏳ will be read at the agent’s next step');
    sim.inbound.set('b', {
      inboundId: 'b',
      route,
      telegramMessageId: 50,
      state: 'sent',
      placeholderId: 900,
      placeholderKind: 'steer',
      placeholderDue: undefined,
    });
    sim.failEdits = 1;
    sim.frame({ type: 'message_taken', turnId: 't', inboundIds: ['b'] });
    expect(sim.marker('b')).toBe('⏳ will be read at the agent’s next step');
    expect(sim.owed()).toEqual(['b']);
    sim.answer('t', 'done');
    expect(sim.machine.size()).toBe(0);
    sim.clock.advance(15_000);
    expect(sim.marker('b')).toBe('✓ taken into the current turn');
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
      presentation: 'edit' as const,
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
    expect(sim.reaction('b')).toBe(WAITING);
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

  it('typing stops while the turn waits out a usage limit (hours of "typing…" for nothing), and comes back when it goes on', () => {
    const sim = new TurnSim();
    const route = { chatId: 5 };
    sim.message(route, 'a');
    sim.started('t', route, ['a']);
    expect(sim.actions('typing')).toHaveLength(1);
    const limit = { type: 'usage_limit', turnId: 't', route, resetsAt: 3_600_000 } as const;
    sim.frame({ ...limit, state: 'limited' });
    sim.clock.advance(3_600_000);
    expect(sim.actions('typing')).toHaveLength(1);
    sim.frame({ ...limit, state: 'resumed' });
    expect(sim.actions('typing')).toHaveLength(2);
    sim.answer('t', 'x');
    expect(sim.reaction('a')).toBe('👌');
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
      sim.refused(['over budget'], 'the daily budget is spent');
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

  // A budget's refusal reached the machine as a pretend bridge frame (`messages_unread`, issue 28); it is
  // the gateway's own input now. A boot's re-send refuses a message the machine does not hold yet.
  it('a refusal of a message the machine does not hold (a boot re-send): adopted, marked unread, gone', () => {
    const sim = new TurnSim();
    const route = { chatId: -8 };
    sim.inbound.set('queued', {
      inboundId: 'queued',
      route,
      telegramMessageId: 5,
      state: 'queued',
      placeholderId: undefined,
      placeholderKind: undefined,
      placeholderDue: undefined,
    });
    sim.refused(['queued'], 'the daily budget is spent');
    expect(sim.inbound.get('queued')?.state).toBe('unread');
    expect(sim.machine.size()).toBe(0);
  });

  // A budget's refusal was reported back into the turns after the hand-over (issue 28): the machine took
  // the message, the forward asked the budget, and the gate called `Turns.refused`. The budget is asked
  // first now, and its verdict comes in with the message: the machine's own arrival step marks it.
  it.each<[string, number]>([
    ['a rich private chat (drafts)', 31],
    ['a group, while a turn runs', -31],
  ])(
    'in %s, a message today’s budget refused arrives refused: unread at once, its marker alone says why',
    (_, chatId) => {
      const sim = new TurnSim();
      const route = { chatId };
      if (chatId < 0) {
        sim.message(route, 'q');
        sim.started('t', route, ['q']);
      }
      const reason = 'the agent’s daily budget of $1.00 is used up';
      sim.message(route, 'r', { admit: false, reason });
      expect(sim.inbound.get('r')?.state).toBe('unread');
      // No "Thinking…" draft, no 👀: nothing is shown for it before (or beside) its marker.
      expect(sim.actions('thinking').filter((a) => a.inboundId === 'r')).toEqual([]);
      expect(sim.actions('react').filter((a) => a.inboundId === 'r')).toEqual([]);
      expect(sim.actions('send_placeholder').map((a) => `${a.inboundId}: ${a.text}`)).toEqual([
        `r: ${unreadText(reason)}`,
      ]);
      expect(sim.marker('r')).toBe(unreadText(reason));
      expect(sim.machine.holdsInbound('r')).toBe(false);
    },
  );

  it('a message the budget holds (turns running elsewhere may use it up) is acknowledged as one admitted', () => {
    const sim = new TurnSim();
    sim.message({ chatId: 32 }, 'h', { admit: 'hold' });
    expect(sim.actions('thinking').map((a) => a.inboundId)).toEqual(['h']);
    expect(sim.inbound.get('h')?.state).toBe('sent');
    expect(sim.machine.holdsInbound('h')).toBe(true);
  });

  it('in a group, while a turn runs: 👀, then one reply that says why (words, not a reaction)', () => {
    const sim = new TurnSim();
    const route = { chatId: -7 };
    sim.message(route, 'q');
    sim.started('t', route, ['q']);
    sim.message(route, 'm');
    expect(sim.reaction('m')).toBe(WAITING);
    sim.frame({ type: 'messages_unread', inboundIds: ['m'], reason: 'the conversation failed' });
    expect(sim.actions('send_placeholder').map((a) => a.text)).toEqual([
      unreadText('the conversation failed'),
    ]);
    expect(sim.marker('m')).toBe(unreadText('the conversation failed'));
    sim.answer('t', 'x');
    expect(sim.reaction('m')).toBe(WAITING);
    expect(sim.machine.size()).toBe(0);
  });
});
