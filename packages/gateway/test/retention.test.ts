/**
 * Retention with an injected clock: finished rows and exchange files older than the configured days are
 * deleted; an attachment a message still in the inbox refers to, a file of a send not yet uploaded,
 * younger files, unfinished rows and the newest update (where polling resumes) are kept.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameOf } from '@switchyard/protocol';
import { silentLogger, systemClock } from '@switchyard/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRetention } from '../src/io/ops/retention.js';
import { type GatewayStore, openGatewayStore } from '../src/store/store.js';

const DAY = 24 * 3600_000;

const message = (n: number, paths: string[] = []): FrameOf<'user_message'> => ({
  type: 'user_message',
  inboundId: `tg:1:${n}`,
  route: { chatId: 1 },
  telegramMessageId: n,
  sender: { id: 1, name: 'u' },
  text: `m${n}`,
  attachments: paths.map((path) => ({ kind: 'document' as const, path, size: 1 })),
  sentAt: 0,
});

describe('retention', () => {
  let dir: string;
  let inbox: string;
  let store: GatewayStore;
  const file = (name: string, ageDays: number): string => {
    const path = join(inbox, name);
    writeFileSync(path, 'x');
    const at = (Date.now() - ageDays * DAY) / 1000;
    utimesSync(path, at, at);
    return path;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sy-ret-'));
    inbox = join(dir, 'inbox');
    mkdirSync(inbox);
    store = openGatewayStore(join(dir, 'g.sqlite'));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A retention of `days` over the test's store and exchange directory, on a clock that reads `now()`. */
  const retentionOf = (days: number, now: () => number) =>
    createRetention({ store, dirs: [inbox], days, clock: { ...systemClock, now }, logger: silentLogger });

  it('deletes finished rows and unreferenced attachments past the age, at start and on schedule', async () => {
    const old = file('old.jpg', 8);
    const partial = file('crashed.pdf.part', 8);
    const waiting = file('waiting.pdf', 8);
    const young = file('young.png', 1);
    store.recordUpdates([
      { updateId: 10, payload: { update_id: 10 } },
      { updateId: 11, payload: { update_id: 11 } },
    ]);
    store.addInbound({ inboundId: 'tg:1:1', frame: message(1, [old]), updateId: 10 });
    store.addInbound({ inboundId: 'tg:1:2', frame: message(2, [waiting]), updateId: 11 });
    store.setInboundState(['tg:1:1'], 'taken');
    store.addCommandRoute('cmd-1', { chatId: 1 });

    // The rows were written now; a clock 8 days ahead makes them 8 days old (the files really are).
    let now = Date.now() + 8 * DAY;
    const logged: unknown[] = [];
    const retention = createRetention({
      store,
      dirs: [inbox],
      days: 7,
      everyMs: 20,
      clock: { ...systemClock, now: () => now },
      logger: { ...silentLogger, info: (fields: unknown) => logged.push(fields) },
    });
    const report = await retention.start();
    expect(report).toMatchObject({ inbound: 1, commandRoutes: 1, updates: 1 });
    expect(existsSync(waiting)).toBe(true); // its message is still in the inbox
    expect(existsSync(young)).toBe(false); // 1 day old by the file, 9 by the clock
    expect(existsSync(old)).toBe(false);
    expect(existsSync(partial)).toBe(false);
    expect(report.files).toBe(3);
    expect(store.getInbound('tg:1:1')).toBeUndefined();
    expect(store.getInbound('tg:1:2')).toMatchObject({ state: 'queued' });
    expect(store.nextUpdateOffset()).toBe(12);

    // The message is taken: its attachment goes at the next scheduled pass.
    store.setInboundState(['tg:1:2'], 'taken');
    now += 1;
    await new Promise((resolve) => setTimeout(resolve, 100));
    await retention.stop();
    expect(existsSync(waiting)).toBe(false);
    expect(store.getInbound('tg:1:2')).toBeUndefined();
    expect(logged.length).toBeGreaterThan(1);
  });

  it("sweeps the bridge's copies of files the agent sent, but not those of a send not yet uploaded", async () => {
    const sent = file('out-1-aaaaaaaaaaaa-0', 8);
    const pending = file('out-2-bbbbbbbbbbbb-0', 8);
    const orphan = file('out-3-cccccccccccc-0.part', 8); // a bridge crash mid-copy
    const send = (fileId: string, path: string): FrameOf<'file_send'> => ({
      type: 'file_send',
      fileId,
      route: { chatId: 1 },
      files: [{ path, name: 'report.pdf', kind: 'document', size: 1 }],
    });
    store.addFileSend(send('f-sent', sent));
    store.endFileSend('f-sent', { messageIds: [5] });
    store.addFileSend(send('f-pending', pending));
    store.markFileUploading('f-pending');
    const retention = retentionOf(7, () => Date.now() + 8 * DAY);
    const report = await retention.run();
    expect(existsSync(pending)).toBe(true);
    expect(existsSync(sent)).toBe(false);
    expect(existsSync(orphan)).toBe(false);
    expect(report).toMatchObject({ files: 2, fileSends: 1 });
  });

  it('forgets a run key once its message has left the inbox and its note is settled, never before', async () => {
    const run = (key: string, inboundId: string) =>
      store.recordRun({
        key,
        inboundId,
        route: { chatId: 1 },
        origin: { kind: 'webhook', name: 'github' },
        note: 'n',
      });
    run('webhook:github:done', 'run:webhook:github:done');
    store.noteSent('webhook:github:done', 5);
    run('webhook:github:waiting', 'tg:1:1');
    store.noteSent('webhook:github:waiting', 6);
    store.addInbound({ inboundId: 'tg:1:1', frame: message(1, []) }); // still queued
    run('webhook:github:note-due', 'run:webhook:github:note-due'); // its note not yet sent
    const retention = retentionOf(7, () => Date.now() + 8 * DAY);
    expect(await retention.run()).toMatchObject({ automationRuns: 1 });
    expect(store.getRun('webhook:github:done')).toBeUndefined();
    expect(store.getRun('webhook:github:waiting')).toBeDefined();
    expect(store.getRun('webhook:github:note-due')).toBeDefined();
  });

  it("forgets the budgets' spend past 35 days, on its own horizon: a retention of hours keeps the month's", async () => {
    const now = Date.now();
    store.spendStarted('old', { chatId: 1 }, 1);
    store.spendEnded('old', { chatId: 1 }, 2, now - 36 * DAY);
    // What `switchyard status --cost` counts as this month's: three weeks old, and kept.
    store.spendStarted('month', { chatId: 1 }, 1);
    store.spendEnded('month', { chatId: 1 }, 0.25, now - 20 * DAY);
    store.spendStarted('today', { chatId: 1 }, 1);
    store.spendEnded('today', { chatId: 1 }, 0.5, now - 3600_000);
    expect(store.spentSince(now - 40 * DAY)).toBe(2.75);
    const retention = retentionOf(0.1, () => now);
    expect((await retention.run()).spend).toBe(1);
    // The rows a budget or the month's cost still counts are there; the one neither counts is not.
    expect(store.spentSince(now - 40 * DAY)).toBe(0.75);
  });

  it('keeps everything younger than the configured days', async () => {
    const path = file('a.jpg', 2);
    store.addInbound({ inboundId: 'tg:1:1', frame: message(1, [path]) });
    store.setInboundState(['tg:1:1'], 'taken');
    // The file is 2.5 days old by this clock, the row half a day.
    const retention = retentionOf(3, () => Date.now() + DAY / 2);
    expect(await retention.run()).toEqual({
      updates: 0,
      inbound: 0,
      turns: 0,
      commandRoutes: 0,
      fileSends: 0,
      automationRuns: 0,
      files: 0,
      spend: 0,
    });
    expect(existsSync(path)).toBe(true);
    expect(store.getInbound('tg:1:1')).toBeDefined();
  });
});
