import { ManualClock } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import {
  connectionChanged,
  dueNotices,
  hostUnreachableText,
  messageCame,
  startOutage,
} from '../../src/core/bridge/host-outage.js';
import { createHostNotice } from '../../src/io/bridge/host-notice.js';

describe('a bridge on another host that cannot be reached: the rule', () => {
  const GRACE = 30_000;

  it('tells a waiting conversation once, after the grace, and not again in the same outage', () => {
    let s = connectionChanged(connectionChanged(startOutage(0), true, 10), false, 1_000);
    s = messageCame(s, 'c1');
    expect(dueNotices(s, 20_000, GRACE)).toMatchObject({ tell: [], wakeAt: 31_000 });
    const due = dueNotices(s, 31_000, GRACE);
    expect(due.tell).toEqual(['c1']);
    s = messageCame(due.state, 'c1');
    expect(dueNotices(s, 40_000, GRACE).tell).toEqual([]);
    // Another conversation in the same outage is told at once: the grace is over.
    expect(dueNotices(messageCame(s, 'c2'), 41_000, GRACE).tell).toEqual(['c2']);
  });

  it('says nothing for a drop shorter than the grace, and forgets an outage once connected', () => {
    let s = connectionChanged(startOutage(0), true, 5);
    s = messageCame(connectionChanged(s, false, 100), 'c1');
    s = connectionChanged(s, true, 5_000);
    expect(dueNotices(s, 60_000, GRACE)).toEqual({ tell: [], state: s, wakeAt: undefined });
    // The next outage tells it again.
    s = messageCame(connectionChanged(s, false, 70_000), 'c1');
    expect(dueNotices(s, 100_000, GRACE).tell).toEqual(['c1']);
  });

  it('no message, no notice: a conversation that sent nothing during the outage is not told', () => {
    const s = connectionChanged(startOutage(0), false, 0);
    expect(dueNotices(s, 1_000_000, GRACE).tell).toEqual([]);
    expect(messageCame(connectionChanged(s, true, 1), 'c1').waiting).toEqual([]);
  });

  it('names the host and says the messages are kept', () => {
    expect(hostUnreachableText('sy-demo@build-box')).toMatch(/sy-demo@build-box.*can’t be reached.*kept/);
  });
});

describe('a bridge on another host that cannot be reached: the shell', () => {
  it('sends the notice to the waiting chat and topic on the clock, once per outage', () => {
    const clock = new ManualClock(1_000);
    const sent: { route: unknown; text: string }[] = [];
    const notice = createHostNotice({
      host: 'u@h',
      unreachableNoticeMs: 5_000,
      clock,
      reply: (route, text) => sent.push({ route, text }),
    });
    // At start no bridge has connected: a message then waits.
    notice.message({ chatId: 1 });
    notice.message({ chatId: -5, threadId: 7 });
    clock.advance(4_999);
    expect(sent).toEqual([]);
    clock.advance(1);
    expect(sent.map((s) => s.route)).toEqual([{ chatId: 1 }, { chatId: -5, threadId: 7 }]);
    expect(sent[0]?.text).toBe(hostUnreachableText('u@h'));
    notice.message({ chatId: 1 });
    clock.advance(60_000);
    expect(sent).toHaveLength(2);
    // Back, then a short drop: nothing more.
    notice.connection(true);
    notice.connection(false);
    notice.message({ chatId: 1 });
    notice.connection(true);
    clock.advance(60_000);
    expect(sent).toHaveLength(2);
    notice.stop();
  });
});
