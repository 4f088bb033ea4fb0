import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ActionResult,
  type CadenceOptions,
  type CadenceStep,
  type CardAction,
  type CardEvent,
  createCadence,
} from '../src/index.js';
import { ev } from './events.js';

type Failures = Partial<Record<'send' | 'edit' | 'pin' | 'unpin', boolean>>;

/**
 * A fake Telegram behind the cadence, with fake time: every action is performed and reported at once
 * (or held, when `manual`), timers fire at `wakeAt`, and the invariants a Telegram chat would show
 * are checked on every action.
 */
function harness(options: Partial<CadenceOptions<string>> = {}, fail: Failures = {}, manual = false) {
  const cadence = createCadence<string>({ laneKey: (route) => route.split('/')[0] ?? route, ...options });
  const log: { at: number; action: CardAction<string> }[] = [];
  const held: CardAction<string>[] = [];
  const pinned = new Set<number>();
  let now = 0;
  let wakeAt: number | undefined;
  let nextMessageId = 100;

  const resultOf = (action: CardAction<string>): ActionResult | undefined => {
    switch (action.kind) {
      case 'send':
        return fail.send ? { kind: 'send_failed' } : { kind: 'sent', messageId: nextMessageId++ };
      case 'edit':
        return fail.edit ? { kind: 'edit_failed' } : { kind: 'edited' };
      case 'pin':
        if (fail.pin) return { kind: 'pin_failed' };
        expect(pinned.has(action.messageId)).toBe(false);
        pinned.add(action.messageId);
        return { kind: 'pinned' };
      case 'unpin':
        expect(pinned.delete(action.messageId)).toBe(true);
        return fail.unpin ? { kind: 'unpin_failed' } : { kind: 'unpinned' };
      case 'closed':
        return undefined;
    }
  };

  const apply = (step: CadenceStep<string>): void => {
    wakeAt = step.wakeAt;
    for (const action of step.actions) {
      log.push({ at: now, action });
      if (manual) {
        if (action.kind !== 'closed') held.push(action);
        continue;
      }
      const result = resultOf(action);
      if (result !== undefined) apply(cadence.report(action.cardId, result, now));
    }
  };

  const until = (t: number): void => {
    while (wakeAt !== undefined && wakeAt <= t) {
      now = Math.max(now, wakeAt);
      apply(cadence.tick(now));
    }
    now = Math.max(now, t);
  };

  return {
    cadence,
    log,
    pinned,
    get now() {
      return now;
    },
    get wakeAt() {
      return wakeAt;
    },
    /** Lets time pass to `event.at`, then applies the event. */
    send(event: CardEvent, turnId = 't1', route = 'chat') {
      until(event.at);
      apply(cadence.event(route, turnId, event));
    },
    until,
    /** Lets time pass to `at`, then adopts cards an earlier process sent (route 'chat', request as `ev.start`). */
    adopt(at: number, cards: { turnId?: string; messageId: number; startedAt?: number; ended?: number }[]) {
      until(at);
      const adopted = cards.map((c) => ({
        route: 'chat',
        turnId: c.turnId ?? 't1',
        messageId: c.messageId,
        request: 'fix the build',
        startedAt: c.startedAt ?? 0,
        ...(c.ended === undefined
          ? {}
          : { ended: { type: 'turn_ended', at: c.ended, outcome: 'success' } as const }),
      }));
      apply(cadence.adopt(adopted, at));
    },
    /** Reports the oldest held action's result (manual mode). */
    settle(result?: ActionResult) {
      const action = held.shift();
      if (action === undefined) throw new Error('nothing held');
      const outcome = result ?? resultOf(action);
      if (outcome !== undefined) apply(cadence.report(action.cardId, outcome, now));
      return action;
    },
    held,
    kinds: (turnId?: string) =>
      log.filter((e) => turnId === undefined || e.action.turnId === turnId).map((e) => e.action.kind),
    edits: () => log.flatMap((e) => (e.action.kind === 'edit' ? [{ at: e.at, ...e.action }] : [])),
  };
}

describe('cadence: showing the card', () => {
  it('produces no card, no pin and no edit for a turn shorter than the show delay (I6)', () => {
    const h = harness();
    h.send(ev.start(0));
    h.send(ev.tool(1_000, 'a'));
    h.send(ev.done(5_000, 'a'));
    h.send(ev.end(9_999));
    h.until(60_000);
    expect(h.kinds()).toEqual(['closed']);
    expect(h.cadence.cards()).toEqual([]);
  });

  it('sends the card when the show delay passes, then pins it', () => {
    const h = harness();
    h.send(ev.start(0));
    expect(h.wakeAt).toBe(10_000);
    h.until(10_000);
    expect(h.log.map((e) => [e.at, e.action.kind])).toEqual([
      [10_000, 'send'],
      [10_000, 'pin'],
    ]);
    expect(h.cadence.cards()[0]?.pinned).toBe(true);
  });

  it('honours a configured show delay', () => {
    const h = harness({ showDelayMs: 30_000 });
    h.send(ev.start(0));
    h.until(29_999);
    expect(h.kinds()).toEqual([]);
    h.until(30_000);
    expect(h.kinds()).toEqual(['send', 'pin']);
  });

  it('shows the card at once when a sub-agent starts', () => {
    const h = harness();
    h.send(ev.start(0));
    h.send(ev.agent(1_500, 'a1'));
    expect(h.log[0]).toMatchObject({ at: 1_500, action: { kind: 'send' } });
  });
});

describe('cadence: edits', () => {
  it('coalesces a burst of events into one edit after the coalesce window', () => {
    const h = harness({ heartbeatMs: 1e9 });
    h.send(ev.start(0));
    h.until(10_000);
    for (let i = 0; i < 10; i += 1) h.send(ev.tool(20_000 + i * 30, `x${i}`, 'Read', { file_path: `f${i}` }));
    h.until(25_000);
    expect(h.edits().map((e) => e.at)).toEqual([20_400]);
    expect(h.edits()[0]?.html).toContain('f9');
  });

  it('spaces edits of one card by the minimum edit interval', () => {
    const h = harness({ minEditIntervalMs: 3_000, heartbeatMs: 1e9 });
    h.send(ev.start(0));
    h.until(10_000);
    for (let t = 10_100; t < 20_000; t += 500) h.send(ev.text(t, `step at ${t}`));
    h.until(25_000);
    const times = h.edits().map((e) => e.at);
    expect(times.length).toBeGreaterThan(1);
    for (let i = 1; i < times.length; i += 1)
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(3_000);
    expect(times[0]).toBe(13_000);
  });

  it('re-renders the elapsed time on a heartbeat while the turn runs, and stops once it is over', () => {
    const h = harness();
    h.send(ev.start(0));
    h.until(31_000);
    expect(h.edits().map((e) => e.at)).toEqual([15_000, 20_000, 25_000, 30_000]);
    expect(h.edits()[0]?.html).toContain('· 15s');
    h.send(ev.end(32_000));
    const count = h.log.length;
    h.until(120_000);
    expect(h.log.length).toBe(count);
  });

  it('takes "Waiting for your answer" off at once when the prompt is answered, at high priority (issue 31)', () => {
    const h = harness({ heartbeatMs: 1e9 });
    h.send(ev.start(0));
    h.until(10_000);
    h.send(ev.ask(20_000, 'r'));
    h.until(21_000);
    expect(h.edits().at(-1)?.html).toMatch(/^❓ <b>Waiting for your answer/);
    h.send(ev.answered(24_000, 'r'));
    const edit = h.edits().at(-1);
    expect(edit).toMatchObject({ at: 24_000, urgent: true });
    expect(edit?.html).toMatch(/^⚙️ <b>Working/);
    // Other changes still coalesce and go at low priority.
    h.send(ev.text(30_000, 'more'));
    h.until(31_000);
    expect(h.edits().at(-1)).toMatchObject({ at: 30_400, urgent: false });
  });

  it('emits nothing when an event does not change the rendered text', () => {
    const h = harness({ heartbeatMs: 1e9, minEditIntervalMs: 0 });
    h.send(ev.start(0));
    h.send(ev.agent(10_000, 'a'));
    const after = h.log.length;
    h.send(ev.agentTool(10_050, 'a', 'g'));
    h.send(ev.agentToolDone(10_060, 'a', 'g'));
    h.until(10_500);
    expect(h.edits()).toHaveLength(1); // the tool count changed: one edit
    h.send({ type: 'subagent_text', at: 10_600, agentId: 'a', text: 'not shown on the card' });
    h.until(10_999);
    expect(h.log.length).toBe(after + 1);
  });

  it('keeps one action in flight per card: nothing more until the caller reports', () => {
    const h = harness({}, {}, true);
    h.send(ev.start(0));
    h.until(10_000);
    h.send(ev.text(10_100, 'busy'));
    h.until(20_000);
    expect(h.kinds()).toEqual(['send']);
    expect(h.wakeAt).toBeUndefined();
    h.settle(); // sent
    expect(h.kinds()).toEqual(['send', 'pin']);
    h.settle(); // pinned
    expect(h.kinds()).toEqual(['send', 'pin', 'edit']);
  });
});

describe('cadence: closing', () => {
  it('emits the final render exactly once, as Done, then unpins exactly once (I5, I2, I3)', () => {
    const h = harness();
    h.send(ev.start(0));
    h.until(12_000);
    h.send(ev.end(12_500));
    h.until(100_000);
    expect(h.kinds()).toEqual(['send', 'pin', 'edit', 'unpin', 'closed']);
    const final = h.edits().filter((e) => e.final);
    expect(final).toHaveLength(1);
    expect(final[0]?.html).toMatch(/^✅ <b>Done<\/b>/);
    expect(h.pinned.size).toBe(0);
    h.send(ev.end(100_001));
    h.send(ev.tool(100_002, 'late'));
    h.until(200_000);
    expect(h.kinds()).toHaveLength(5);
  });

  it('waits for a pin in flight before the final edit and the unpin', () => {
    const h = harness({}, {}, true);
    h.send(ev.start(0));
    h.until(10_000);
    h.settle(); // sent → pin requested
    h.send(ev.end(10_200));
    expect(h.kinds()).toEqual(['send', 'pin']);
    h.settle(); // pinned
    h.until(11_000);
    h.settle(); // final edit
    expect(h.kinds()).toEqual(['send', 'pin', 'edit', 'unpin']);
    h.settle(); // unpinned
    expect(h.kinds()).toEqual(['send', 'pin', 'edit', 'unpin', 'closed']);
  });

  it('degrades to an unpinned live card when the pin fails, and then never unpins', () => {
    const h = harness({}, { pin: true });
    h.send(ev.start(0));
    h.until(16_000);
    h.send(ev.end(17_000));
    h.until(30_000);
    expect(h.kinds()).toEqual(['send', 'pin', 'edit', 'edit', 'closed']);
    expect(h.edits().at(-1)?.final).toBe(true);
  });

  it('closes quietly when the send fails', () => {
    const h = harness({}, { send: true });
    h.send(ev.start(0));
    h.until(60_000);
    expect(h.kinds()).toEqual(['send', 'closed']);
  });

  it('stops editing a message that is gone, and still unpins it', () => {
    const h = harness({}, {}, true);
    h.send(ev.start(0));
    h.until(10_000);
    h.settle();
    h.settle();
    h.send(ev.text(10_100, 'x'));
    h.until(11_000);
    h.settle({ kind: 'edit_failed', gone: true });
    expect(h.kinds()).toEqual(['send', 'pin', 'edit', 'unpin']);
    h.settle();
    h.until(100_000);
    expect(h.kinds()).toEqual(['send', 'pin', 'edit', 'unpin', 'closed']);
  });

  it('closes a silent card at the zombie ceiling like a turn end, after a stuck warning (I9)', () => {
    const h = harness();
    h.send(ev.start(0));
    h.send(ev.tool(1_000, 'a', 'Bash', { command: 'sleep 9999' }));
    h.until(125_000);
    expect(h.edits().at(-1)?.html).toContain('it may be stuck');
    h.until(601_000);
    expect(h.kinds().slice(-3)).toEqual(['edit', 'unpin', 'closed']);
    const final = h.edits().filter((e) => e.final);
    expect(final).toHaveLength(1);
    expect(final[0]?.at).toBe(601_000);
    expect(final[0]?.html).toMatch(/^⏸ <b>Stopped tracking<\/b>/);
    expect(h.pinned.size).toBe(0);
  });

  it('honours a configured zombie ceiling', () => {
    const h = harness({ zombieMs: 60_000 });
    h.send(ev.start(0));
    h.until(59_999);
    expect(h.kinds()).not.toContain('closed');
    h.until(60_000);
    expect(h.kinds()).toContain('closed');
  });

  it('keeps the card live while a sub-agent outlives its turn, and closes when it finishes', () => {
    const h = harness();
    h.send(ev.start(0));
    h.send(ev.agent(1_000, 'bg'));
    h.send(ev.end(2_000));
    h.until(30_000);
    expect(h.kinds()).not.toContain('unpin');
    expect(h.edits().at(-1)?.html).toContain('1 sub-agent still running');
    h.send(ev.agentTool(40_000, 'bg', 'r', 'Read', { file_path: 'later.ts' }), 'some-other-turn');
    h.until(41_000);
    expect(h.edits().at(-1)?.html).toContain('later.ts');
    h.send(ev.agentEnd(50_000, 'bg'));
    h.until(60_000);
    expect(h.kinds().slice(-3)).toEqual(['edit', 'unpin', 'closed']);
    expect(h.edits().at(-1)?.final).toBe(true);
  });
});

describe('cadence: a card left open by an earlier process', () => {
  it('is re-rendered at once and pinned again while its turn runs, then closed as Done', () => {
    const h = harness();
    h.adopt(50_000, [{ messageId: 7 }]);
    h.until(50_400);
    expect(h.kinds()).toEqual(['pin', 'edit']);
    expect(h.edits()[0]).toMatchObject({ messageId: 7, final: false });
    expect(h.edits()[0]?.html).toContain('fix the build');
    h.send(ev.end(60_000));
    h.until(100_000);
    expect(h.kinds().slice(-3)).toEqual(['edit', 'unpin', 'closed']);
    expect(h.kinds().filter((k) => k === 'send' || k === 'pin')).toEqual(['pin']);
    expect(h.edits().at(-1)).toMatchObject({ messageId: 7, final: true });
    expect(h.edits().at(-1)?.html).toMatch(/Done/);
    expect(h.pinned.size).toBe(0);
  });

  it('of a turn that ended meanwhile: one final edit, no pin', () => {
    const h = harness();
    h.adopt(50_000, [{ messageId: 7, ended: 40_000 }]);
    h.until(100_000);
    expect(h.kinds()).toEqual(['edit', 'closed']);
    expect(h.edits()[0]).toMatchObject({ messageId: 7, final: true });
    expect(h.edits()[0]?.html).toMatch(/Done/);
  });

  it('is not adopted over a card the turn has here, nor after its card closed', () => {
    const h = harness();
    h.send(ev.start(0));
    h.until(12_000);
    h.adopt(12_000, [{ messageId: 7 }]);
    expect(h.cadence.cards().map((c) => c.messageId)).toEqual([100]);
    h.send(ev.end(13_000));
    h.until(100_000);
    h.adopt(100_000, [{ messageId: 7 }]);
    expect(h.cadence.cards()).toEqual([]);
    expect(h.log.some((e) => 'messageId' in e.action && e.action.messageId === 7)).toBe(false);
  });

  it('the newest of a lane supersedes the older ones: those get their final edit, unpinned', () => {
    const h = harness();
    h.adopt(50_000, [
      { turnId: 't1', messageId: 7 },
      { turnId: 't2', messageId: 8, startedAt: 1_000 },
    ]);
    h.until(100_000);
    expect(h.kinds('t1')).toEqual(['edit', 'closed']);
    expect(h.kinds('t2').slice(0, 2)).toEqual(['pin', 'edit']);
    expect(h.cadence.cards().map((c) => [c.turnId, c.messageId, c.pinned])).toEqual([['t2', 8, true]]);
  });
});

describe('cadence: turns in one lane', () => {
  it('closes the previous card, with its unpin, before the next card is sent (I7)', () => {
    const h = harness();
    h.send(ev.start(0), 'A');
    h.until(15_000);
    h.send(ev.start(20_000), 'B');
    h.send(ev.agent(20_000, 'sub'), 'B');
    h.until(40_000);
    const order = h.log.map((e) => `${e.action.turnId}:${e.action.kind}`);
    expect(order.slice(0, 2)).toEqual(['A:send', 'A:pin']);
    const unpinA = order.indexOf('A:unpin');
    expect(unpinA).toBeGreaterThan(0);
    expect(order.indexOf('A:closed')).toBeLessThan(order.indexOf('B:send'));
    expect(order.indexOf('B:pin')).toBeGreaterThan(unpinA);
    const finalA = h.edits().filter((e) => e.turnId === 'A' && e.final);
    expect(finalA).toHaveLength(1);
    expect(new Set(h.log.map((e) => e.action.cardId)).size).toBe(2);
  });

  it('leaves cards of other lanes alone', () => {
    const h = harness();
    h.send(ev.start(0), 'A', 'chat1');
    h.send(ev.start(0), 'B', 'chat2');
    h.until(12_000);
    expect(h.kinds('A')).toEqual(['send', 'pin']);
    expect(h.kinds('B')).toEqual(['send', 'pin']);
  });

  it('moves running sub-agents of a superseded card to the new one, which shows at once', () => {
    const h = harness();
    h.send(ev.start(0), 'A');
    h.send(ev.agent(1_000, 'bg', 'background survey'), 'A');
    h.send(ev.end(2_000), 'A');
    h.send(ev.start(30_000, 'next question'), 'B');
    h.until(32_000);
    const finalA = h.edits().find((e) => e.turnId === 'A' && e.final);
    expect(finalA?.html).toContain('continues in the next card');
    const sendB = h.log.find((e) => e.action.turnId === 'B' && e.action.kind === 'send');
    expect(sendB?.at).toBeLessThanOrEqual(32_000);
    h.send(ev.agentEnd(40_000, 'bg'), 'A');
    expect(h.cadence.cards()[0]?.state.subagents[0]?.status).toBe('success');
  });

  it('a sub-agent that finishes during the next turn leaves the cards: both of the next two end unpinned', () => {
    const h = harness();
    h.send(ev.start(0, 'delegate'), 'A');
    h.send(ev.agent(1_000, 'bg', 'list the files'), 'A');
    h.send(ev.end(2_000), 'A');
    h.send(ev.start(30_000, 'next one'), 'B');
    // The finish names the launching turn; it reaches the card that took the sub-agent over.
    h.send(ev.agentEnd(33_000, 'bg'), 'A');
    h.send(ev.end(40_000), 'B');
    h.send(ev.start(45_000, 'and another'), 'C');
    h.send(ev.end(80_000), 'C');
    h.until(90_000);
    expect(h.cadence.cards()).toEqual([]);
    expect(h.pinned.size).toBe(0);
    for (const turn of ['B', 'C']) expect(h.kinds(turn).slice(-2)).toEqual(['unpin', 'closed']);
    expect(h.edits().filter((e) => e.final && /still running/.test(e.html))).toEqual([]);
  });

  it('gives up on a sub-agent that went silent after its turn: the card is not left pinned for it', () => {
    const h = harness({ zombieMs: 60_000 });
    h.send(ev.start(0, 'delegate'), 'A');
    h.send(ev.agent(1_000, 'bg', 'list the files'), 'A');
    h.send(ev.end(2_000), 'A');
    // Its end was lost; two more turns come and go.
    h.send(ev.start(30_000, 'next one'), 'B');
    h.send(ev.end(40_000), 'B');
    h.send(ev.start(50_000, 'and another'), 'C');
    h.send(ev.end(70_000), 'C');
    h.until(75_000);
    expect(h.cadence.cards()).toEqual([]);
    expect(h.pinned.size).toBe(0);
    const final = h
      .edits()
      .filter((e) => e.final)
      .at(-1);
    expect(final?.html).toContain('no word from it');
    expect(final?.html).not.toContain('still running');
  });

  it('raises no new card for late events of a closed turn', () => {
    const h = harness();
    h.send(ev.start(0), 'A');
    h.send(ev.end(1_000), 'A');
    h.send(ev.tool(2_000, 'late'), 'A');
    h.until(100_000);
    expect(h.kinds()).toEqual(['closed']);
    expect(h.cadence.cards()).toEqual([]);
  });

  it('ignores stale and mismatched reports', () => {
    const h = harness({}, {}, true);
    h.send(ev.start(0));
    h.until(10_000);
    const cardId = h.held[0]?.cardId ?? '';
    h.cadence.report(cardId, { kind: 'pinned' }, 10_001);
    h.cadence.report('card-999', { kind: 'sent', messageId: 1 }, 10_001);
    expect(h.cadence.cards()[0]?.messageId).toBeUndefined();
    h.settle();
    expect(h.cadence.cards()[0]?.messageId).toBe(100);
  });
});

// ---------------------------------------------------------------------------------------------------
// Property: whatever the events, timing and Telegram failures, each card is sent at most once, pinned at
// most once, unpinned exactly when its pin took, never edited after its final render, and closed once.

describe('cadence properties', () => {
  const step = fc.oneof(
    fc.record({ kind: fc.constant('start' as const), turn: fc.constantFrom('A', 'B', 'C') }),
    fc.record({ kind: fc.constant('end' as const), turn: fc.constantFrom('A', 'B', 'C') }),
    fc.record({
      kind: fc.constant('tool' as const),
      turn: fc.constantFrom('A', 'B', 'C'),
      id: fc.constantFrom('x', 'y', 'z'),
    }),
    fc.record({
      kind: fc.constant('agent' as const),
      turn: fc.constantFrom('A', 'B', 'C'),
      id: fc.constantFrom('p', 'q'),
    }),
    fc.record({
      kind: fc.constant('agentEnd' as const),
      turn: fc.constantFrom('A', 'B', 'C'),
      id: fc.constantFrom('p', 'q'),
    }),
  );
  it('keeps the lifecycle invariants under any interleaving and failures', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(step, fc.integer({ min: 0, max: 200_000 })), { maxLength: 40 }),
        fc.record({ send: fc.boolean(), edit: fc.boolean(), pin: fc.boolean(), unpin: fc.boolean() }),
        (steps, fail) => {
          const h = harness({}, fail);
          let t = 0;
          for (const [s, gap] of steps) {
            t += gap;
            const route = s.turn === 'C' ? 'other' : 'chat';
            const event: CardEvent =
              s.kind === 'start'
                ? ev.start(t)
                : s.kind === 'end'
                  ? ev.end(t)
                  : s.kind === 'tool'
                    ? ev.tool(t, `${s.turn}${s.id}`)
                    : s.kind === 'agent'
                      ? ev.agent(t, s.id)
                      : ev.agentEnd(t, s.id);
            h.send(event, s.turn, route);
          }
          h.until(t + 2_000_000);
          expect(h.cadence.cards()).toEqual([]);
          const byCard = new Map<string, string[]>();
          for (const { action } of h.log)
            byCard.set(action.cardId, [...(byCard.get(action.cardId) ?? []), action.kind]);
          for (const [cardId, kinds] of byCard) {
            const count = (k: string) => kinds.filter((x) => x === k).length;
            expect(count('send')).toBeLessThanOrEqual(1);
            expect(count('pin')).toBeLessThanOrEqual(1);
            expect(count('closed')).toBe(1);
            expect(kinds.at(-1)).toBe('closed');
            expect(count('unpin')).toBe(fail.pin || count('pin') === 0 ? 0 : 1);
            const finals = h.edits().filter((e) => e.cardId === cardId && e.final);
            expect(finals.length).toBeLessThanOrEqual(1);
            const finalAt = h.log.findIndex(
              (e) => e.action.kind === 'edit' && e.action.cardId === cardId && e.action.final,
            );
            if (finalAt >= 0) {
              const after = h.log.slice(finalAt + 1).filter((e) => e.action.cardId === cardId);
              expect(after.every((e) => e.action.kind === 'unpin' || e.action.kind === 'closed')).toBe(true);
            }
          }
          expect(h.pinned.size).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
