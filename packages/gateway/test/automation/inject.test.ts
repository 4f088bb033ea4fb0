/**
 * The injection of a run (`io/automation/inject.ts`): durable with its key in one transaction, a key
 * delivered once, the note before the turn (and the message its answer replies to), the run re-sent
 * from the inbox after a crash like a user's message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FrameOf, ManualClock, type Route, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AutomationRun,
  createInjector,
  type InjectorOptions,
  standInMessageId,
} from '../../src/io/automation/inject.js';
import { type GatewayStore, type InboundRow, openGatewayStore } from '../../src/store/store.js';

const route: Route = { chatId: -100123, threadId: 42 };
const run = (key = 'schedule:ci-digest:2026-12-01T09:00:00Z'): AutomationRun => ({
  key,
  route,
  origin: { kind: 'schedule', name: 'ci-digest' },
  note: '⏰ ci-digest · due 2026-12-01T09:00:00Z',
  text: 'Schedule "ci-digest", due 2026-12-01T09:00:00Z: summarize the CI failures.',
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const storePath = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'inject-'));
  dirs.push(dir);
  return join(dir, 'gateway.sqlite');
};

/** An injector over `store` whose Telegram and bridge are recorders; the note is `noteId`, or fails. */
function harness(store: GatewayStore, noteId: number | 'fails' = 501) {
  const events: string[] = [];
  const placeholders: InboundRow[] = [];
  const forwarded: FrameOf<'user_message'>[] = [];
  const options: InjectorOptions = {
    store,
    turns: {
      arrive: (row) => {
        events.push('arrive');
        placeholders.push(row);
        return { acknowledge: () => void events.push('acknowledge') };
      },
    },
    budget: () => ({ admit: true }),
    forward: (frame) => {
      events.push('forward');
      forwarded.push(frame);
    },
    sendNote: async (_route, text) => {
      events.push(`note:${text}`);
      return noteId === 'fails' ? undefined : noteId;
    },
    noteChat: (chatId) => events.push(`chat:${chatId}`),
    clock: new ManualClock(1_000),
    logger: silentLogger,
  };
  return { injector: createInjector(options), events, placeholders, forwarded };
}

describe('inject', () => {
  it('a run is a queued inbound row with its key before inject returns, and its frame says where it comes from', () => {
    const store = openGatewayStore(':memory:');
    const { injector } = harness(store);
    expect(injector.inject(run())).toBe('accepted');
    const row = store.getInbound('run:schedule:ci-digest:2026-12-01T09:00:00Z');
    expect(row?.state).toBe('queued');
    // Its own conversation in the chat: the schedule's lane (issue 27), not the people's session there.
    expect(row?.route).toEqual({ ...route, lane: 'schedule-ci-digest' });
    expect(row?.frame.route).toEqual({ ...route, lane: 'schedule-ci-digest' });
    expect(row?.frame.origin).toEqual({ kind: 'schedule', name: 'ci-digest' });
    expect(row?.frame.text).toContain('due 2026-12-01T09:00:00Z');
    expect(store.getRun(run().key)?.inboundId).toBe(row?.inboundId);
    expect(store.queuedInbound()).toHaveLength(1);
    store.close();
  });

  it('a key seen before is a duplicate: no second row, note or delivery', async () => {
    const store = openGatewayStore(':memory:');
    const { injector, events } = harness(store);
    expect(injector.inject(run())).toBe('accepted');
    expect(injector.inject({ ...run(), text: 'again' })).toBe('duplicate');
    await injector.stop();
    expect(store.inboxLength()).toBe(1);
    expect(events.filter((e) => e === 'forward')).toHaveLength(1);
    expect(events.filter((e) => e.startsWith('note:'))).toHaveLength(1);
    store.close();
  });

  it('a webhook delivery whose signed content was seen before is a duplicate under any key (a replay under a new id)', async () => {
    const store = openGatewayStore(':memory:');
    const { injector, events } = harness(store);
    const hook = (key: string, contentSha256: string, name = 'github'): AutomationRun => ({
      ...run(key),
      origin: { kind: 'webhook', name },
      contentSha256,
    });
    expect(injector.inject(hook('webhook:github:d-1', 'a'.repeat(64)))).toBe('accepted');
    expect(injector.inject(hook('webhook:github:d-2', 'a'.repeat(64)))).toBe('duplicate');
    // Another body from the same hook, and the same body at another hook, are deliveries of their own.
    expect(injector.inject(hook('webhook:github:d-3', 'b'.repeat(64)))).toBe('accepted');
    expect(injector.inject(hook('webhook:ci:d-1', 'a'.repeat(64), 'ci'))).toBe('accepted');
    await injector.stop();
    expect(store.inboxLength()).toBe(3);
    expect(events.filter((e) => e === 'forward')).toHaveLength(3);
    // Schedules carry no hash: their keys alone decide.
    expect(injector.inject(run('schedule:a:1'))).toBe('accepted');
    expect(injector.inject(run('schedule:a:2'))).toBe('accepted');
    store.close();
  });

  it('the note goes out first and is the message the answer replies to', async () => {
    const store = openGatewayStore(':memory:');
    const { injector, events, placeholders, forwarded } = harness(store, 501);
    injector.inject(run());
    await injector.stop();
    expect(events).toEqual([
      `chat:${route.chatId}`,
      'note:⏰ ci-digest · due 2026-12-01T09:00:00Z',
      'arrive',
      'forward',
      'acknowledge',
    ]);
    expect(placeholders[0]?.telegramMessageId).toBe(501);
    expect(forwarded[0]?.telegramMessageId).toBe(501);
    expect(store.getInbound(forwarded[0]?.inboundId ?? '')?.frame.telegramMessageId).toBe(501);
    expect(store.getRun(run().key)).toMatchObject({ noteState: 'sent', noteMessageId: 501 });
    store.close();
  });

  it('a note that cannot be sent does not hold the run up: it replies to a negative stand-in id', async () => {
    const store = openGatewayStore(':memory:');
    const { injector, forwarded } = harness(store, 'fails');
    injector.inject(run());
    await injector.stop();
    expect(forwarded).toHaveLength(1);
    const id = forwarded[0]?.telegramMessageId ?? 0;
    expect(id).toBe(standInMessageId(run().key));
    expect(id).toBeLessThan(0);
    expect(store.getRun(run().key)?.noteState).toBe('failed');
    store.close();
  });

  it('the run and its key commit together: a failed inbox write records no key, so a retry delivers it', () => {
    const store = openGatewayStore(':memory:');
    let fail = true;
    const failing: GatewayStore = {
      ...store,
      addInbound: (row) => {
        if (fail) throw new Error('disk full');
        store.addInbound(row);
      },
    };
    const { injector } = harness(failing);
    expect(() => injector.inject(run())).toThrow('disk full');
    expect(store.getRun(run().key)).toBeUndefined();
    fail = false;
    expect(injector.inject(run())).toBe('accepted');
    store.close();
  });

  it('after a crash right after the commit the run is still queued, its key still known, its note sent at start', async () => {
    const path = storePath();
    const first = openGatewayStore(path);
    const crashed = harness(first);
    crashed.injector.inject(run());
    first.close(); // the process dies before the note or the frame went anywhere

    const second = openGatewayStore(path);
    const { injector, events } = harness(second, 777);
    expect(second.queuedInbound().map((r) => r.inboundId)).toEqual([`run:${run().key}`]);
    expect(injector.inject(run())).toBe('duplicate');
    injector.start();
    await injector.stop();
    expect(events).toEqual(['note:⏰ ci-digest · due 2026-12-01T09:00:00Z']);
    expect(second.getInbound(`run:${run().key}`)?.telegramMessageId).toBe(777);
    second.close();
  });

  it('refuses a key too long for an inbound id, writing nothing', () => {
    const store = openGatewayStore(':memory:');
    const { injector } = harness(store);
    expect(() => injector.inject(run(`webhook:x:${'y'.repeat(200)}`))).toThrow(/key/);
    expect(store.inboxLength()).toBe(0);
    store.close();
  });

  it("inside the caller's transaction the run commits with it: rolled back, nothing is written, announced or sent", async () => {
    const store = openGatewayStore(':memory:');
    const { injector, events } = harness(store);
    expect(() =>
      store.atomically(() => {
        injector.inject(run());
        throw new Error('the caller failed after injecting');
      }),
    ).toThrow('the caller failed');
    await injector.stop();
    expect(store.getRun(run().key)).toBeUndefined();
    expect(store.inboxLength()).toBe(0);
    expect(events.filter((e) => e.startsWith('note:') || e === 'forward')).toEqual([]);
  });
});
