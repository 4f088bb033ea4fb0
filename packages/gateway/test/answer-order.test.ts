/**
 * Answers in turn order, on a manual clock: two turns' replies in one group over a recording Bot API and
 * the real courier and budget. The failure this pins down: the first turn ends while its live send is
 * still in flight, so its final render is queued only once that send returns — after the second turn's
 * answer, which was ready meanwhile. With the conversation's answer order, every call of the first
 * answer (a long classic one: its live message edited, and a second message) goes before the second's,
 * and both before the cosmetics queued in the lane.
 */
import { ManualClock, silentLogger } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { createBudget } from '../src/core/telegram/send-pacing.js';
import { createAnswerOrder } from '../src/io/reply/answer-order.js';
import { createReplies } from '../src/io/reply/replies.js';
import { createCourier } from '../src/io/telegram/courier.js';
import { createServerParts } from '../src/io/telegram/server-parts.js';

/** Two turns' replies in group -5 over a recording API; `ordered: false` leaves out the answer order. */
async function twoTurns(ordered: boolean): Promise<string[]> {
  const clock = new ManualClock(0);
  const calls: string[] = [];
  let next = 1;
  let release: (() => void) | undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const api = {
    editMessageText: async (_c: number, _id: number, text: string) => {
      calls.push(`edit ${text.slice(0, 6)}`);
      return true;
    },
    deleteMessage: async () => true,
    sendMessageDraft: async () => true,
    sendRichMessageDraft: async () => true,
  };
  const journal = {
    send: async (_c: number, text: string, _o: unknown, owned?: { adopt(id: number): void }) => {
      // The first turn's live send is slow: still in flight when its turn ends.
      if (text === 'first, live') await held;
      calls.push(`send ${text.slice(0, 6)}`);
      const id = next++;
      owned?.adopt(id);
      return { message_id: id };
    },
    sendRich: async () => {
      throw new Error('classic replies only');
    },
  };
  const courier = createCourier(createBudget(), clock);
  const replies = createReplies({
    api: api as never,
    journal: journal as never,
    courier,
    store: { setTurnMessages: () => {} },
    logger: silentLogger,
    clock,
    serverParts: createServerParts(silentLogger),
  });
  const order = createAnswerOrder({ clock });
  const route = { chatId: -5 };
  const first = order.link('-5');
  const one = replies.stream(
    { turnId: 't1', route, presentation: 'classic', messageIds: [], opener: 1 },
    first.after,
  );
  one.show(() => 'first, live');
  await clock.advanceAsync(10);
  // The first answer is long: two messages (past 4,096 characters).
  const finishing = one.finish(`first ${'a'.repeat(4000)}\n\n${'b'.repeat(3000)}`).then(first.settle);
  const second = order.link('-5');
  const two = replies.stream(
    { turnId: 't2', route, presentation: 'classic', messageIds: [], opener: 2 },
    ordered ? second.after : undefined,
  );
  two.show(() => 'second answer');
  const cosmetic = courier.call(-5, async () => calls.push('reaction'), {
    priority: 'cosmetic',
    spends: 'reaction',
  });
  const done = two.finish('second answer, final').then(second.settle);
  await clock.advanceAsync(10);
  release?.();
  await clock.advanceAsync(70_000);
  await Promise.all([finishing, done, cosmetic]);
  return calls;
}

describe('answers in turn order', () => {
  it('a turn’s final message goes before the next turn’s answer, even when it ends with a send in flight', async () => {
    const calls = await twoTurns(true);
    const firstOfSecond = calls.findIndex((c) => c.includes('second'));
    expect(calls.slice(0, firstOfSecond)).toEqual(['send first,', 'edit first ', 'send bbbbbb']);
    expect(calls.filter((c) => c.startsWith('send'))).toHaveLength(3);
    expect(calls.at(-1)).toBe('reaction');
  });

  it('without the answer order the second answer would slip in between (the failure pinned above)', async () => {
    const calls = await twoTurns(false);
    const firstOfSecond = calls.findIndex((c) => c.includes('second'));
    expect(firstOfSecond).toBeLessThan(calls.indexOf('send bbbbbb'));
  });

  it('a reply whose previous one never settles goes after the bound, once, and says so', async () => {
    const clock = new ManualClock(0);
    const overtaken: [string, number][] = [];
    const order = createAnswerOrder({
      clock,
      maxWaitMs: 1000,
      onOvertake: (l, ms) => overtaken.push([l, ms]),
    });
    order.link('-5'); // its render hangs: never settled
    const second = order.link('-5');
    let went = false;
    void second.after?.then(() => {
      went = true;
    });
    await clock.advanceAsync(999);
    expect(went).toBe(false);
    await clock.advanceAsync(1);
    expect(went).toBe(true);
    expect(overtaken).toEqual([['-5', 1000]]);
    // The chain goes on behind the reply that went: the third waits for the second, not the hung first.
    const third = order.link('-5');
    let thirdWent = false;
    void third.after?.then(() => {
      thirdWent = true;
    });
    second.settle();
    await clock.advanceAsync(0);
    expect(thirdWent).toBe(true);
    expect(overtaken).toHaveLength(1);
  });

  it('a settled previous reply releases the next at once and leaves no timer behind', async () => {
    const clock = new ManualClock(0);
    const order = createAnswerOrder({ clock, maxWaitMs: 1000, onOvertake: () => expect.fail('overtaken') });
    const first = order.link('-5');
    const second = order.link('-5');
    expect(clock.pending).toBe(1);
    first.settle();
    await second.after;
    expect(clock.pending).toBe(0);
    await clock.advanceAsync(5000);
    // Another conversation's chain is its own: nothing waits on -5's.
    expect(order.link('-6').after).toBeUndefined();
  });
});
