/**
 * The pool wakes when something is due, not on a fixed tick: `nextWake` (the core) as tables on a
 * manual clock's `now`, and the shell arming one timer for it — none at all while nothing is due.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { nextWake, type SlotView } from '../src/core/pool/pool.js';
import { FileChannelStore } from '../src/io/outbox/outbox.js';
import { createPool } from '../src/io/pool/pool.js';

const view = (key: string, over: Partial<SlotView> = {}): SlotView => ({
  key,
  live: true,
  evictable: true,
  lastActiveAt: 0,
  ...over,
});
const IDLE = 30 * 60_000;
const POLL = 500;

describe('nextWake', () => {
  const clock = new ManualClock(10_000);
  it.each([
    { name: 'nothing live, nothing failed: no wake-up at all', views: [], retries: [], want: undefined },
    {
      name: 'conversations without a process: none either',
      views: [view('a', { live: false }), view('b', { live: false, evictable: false })],
      retries: [],
      want: undefined,
    },
    {
      name: 'a live process: its liveness poll',
      views: [view('a', { lastActiveAt: 10_000 })],
      retries: [],
      want: 10_500,
    },
    {
      name: 'a live, busy process: the poll (busy is never idle-stopped)',
      views: [view('a', { evictable: false, lastActiveAt: 0 })],
      retries: [],
      want: 10_500,
    },
    {
      name: 'an idle process about to expire: its expiry, before the poll',
      views: [view('a', { lastActiveAt: 10_000 - IDLE + 100 })],
      retries: [],
      want: 10_101,
    },
    {
      name: 'an idle process overdue: now, never before',
      views: [view('a', { lastActiveAt: -IDLE })],
      retries: [],
      want: 10_000,
    },
    { name: 'a failed conversation: its retry time', views: [], retries: [13_000], want: 13_000 },
    { name: 'the earliest of several retries', views: [], retries: [13_000, 11_000, 12_000], want: 11_000 },
    {
      name: 'a retry before the poll wins',
      views: [view('a', { lastActiveAt: 10_000 })],
      retries: [10_200],
      want: 10_200,
    },
  ])('$name', ({ views, retries, want }) => {
    expect(nextWake({ views, idleMs: IDLE, retries, livePollMs: POLL }, clock.now())).toBe(want);
  });
});

describe('the pool shell on a manual clock', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('arms no timer while nothing is due, and one timer for a failed conversation’s retry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-pw-'));
    dirs.push(dir);
    const clock = new ManualClock(1_000);
    const store = new FileChannelStore(join(dir, 'outbox.log'));
    const sent: unknown[] = [];
    const pool = createPool({
      options: {
        agent: 'demo',
        socketPath: join(dir, 'sock'),
        stateDir: dir,
        workDir: dir,
        claudeBin: '/nonexistent/claude',
        restartOnExit: false,
        stuckAfterMs: 60_000,
        clock,
      },
      log: silentLogger,
      clock,
      store,
      endpoint: { send: async (frame) => void sent.push(frame) },
      keyOf: (route) => `c${route.chatId}`,
    });
    await pool.start([]);
    expect(clock.pending).toBe(0); // an idle bridge is not woken every 500 ms
    pool.fail('c1', { chatId: 1 }, new Error('its tool socket cannot be bound'));
    expect(clock.pending).toBe(1);
    const retryAt = clock.nextDue as number;
    expect(retryAt).toBeGreaterThan(clock.now());
    pool.fail('c2', { chatId: 2 }, new Error('another'));
    expect(clock.pending).toBe(1); // still one timer, for the earliest
    expect(clock.nextDue).toBe(retryAt);
    await pool.stop('restart');
    expect(clock.pending).toBe(0);
    store.close();
  });
});
