import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameOf } from '@switchyard/protocol';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { inspectGatewayStore } from '../src/store/inspect.js';
import { openGatewayStore } from '../src/store.js';

const frame = (n: number): FrameOf<'user_message'> => ({
  type: 'user_message',
  inboundId: `tg:1:${n}`,
  route: { chatId: 1 },
  telegramMessageId: n,
  sender: { id: 1, name: 'u' },
  text: `m${n}`,
  attachments: [],
  sentAt: 0,
});

describe('store', () => {
  it('keeps what each turn cost, which inspection sums per conversation since a time (status: cost today)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gws-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'g.sqlite');
    const s = openGatewayStore(path);
    const turn = (turnId: string, route: { chatId: number; threadId?: number }, cost?: number) => {
      s.upsertTurn({ turnId, route, request: 'r', startedAt: Date.now() });
      s.endTurn(turnId, 'success', undefined, cost);
    };
    turn('a', { chatId: 1 }, 0.25);
    turn('b', { chatId: 1 }, 0.5);
    turn('c', { chatId: 1, threadId: 5 }, 0.125);
    turn('d', { chatId: 2 });
    s.close();
    expect(inspectGatewayStore(path, 0).costSince).toEqual([
      { chatId: 1, threadId: null, usd: 0.75, turns: 2 },
      { chatId: 1, threadId: 5, usd: 0.125, turns: 1 },
    ]);
    expect(inspectGatewayStore(path, Date.now() + 60_000).costSince).toEqual([]);
  });

  it('keeps inbox rows until the bridge acknowledges their frames, across reopen', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gws-')), 'g.sqlite');
    let s = openGatewayStore(path);
    s.recordUpdates([{ updateId: 10, payload: { update_id: 10 } }]);
    s.addInbound({ inboundId: 'tg:1:1', frame: frame(1), updateId: 10 });
    s.addInbound({ inboundId: 'tg:1:2', frame: frame(2) });
    expect(s.isHandled(10)).toBe(true);
    expect(s.queuedInbound().map((r) => r.inboundId)).toEqual(['tg:1:1', 'tg:1:2']);
    expect(s.channel.append(frame(1))).toBe(1);
    const streamId = s.channel.streamId;
    s.close();

    s = openGatewayStore(path);
    expect(s.channel.streamId).toBe(streamId);
    expect(s.queuedInbound().map((r) => r.inboundId)).toEqual(['tg:1:2']);
    expect(s.channel.append(frame(2))).toBe(2);
    expect(s.inboxLength()).toBe(2);
    s.channel.acknowledge(1);
    expect(s.inboxLength()).toBe(1);
    expect(s.channel.pendingAfter(0).map((p) => p.seq)).toEqual([2]);
    expect(s.nextUpdateOffset()).toBe(11);
    s.close();
  });

  it('drops duplicate updates by update_id and answers a prompt once', () => {
    const s = openGatewayStore(':memory:');
    expect(
      s.recordUpdates([
        { updateId: 1, payload: {} },
        { updateId: 2, payload: undefined },
      ]),
    ).toEqual([1, 2]);
    expect(
      s.recordUpdates([
        { updateId: 2, payload: {} },
        { updateId: 3, payload: {} },
      ]),
    ).toEqual([3]);
    const p = s.addPrompt({ requestId: 'r', kind: 'permission', route: { chatId: 1 }, payload: {} });
    expect(p.token).toMatch(/^[0-9a-f]{16}$/);
    expect(s.closePrompt(p.token, 'answered')).toBe(true);
    expect(s.closePrompt(p.token, 'answered')).toBe(false);
    s.close();
  });
});

/**
 * `fixtures/gateway-v2.sqlite` was written by the gateway at schema version 2 (commit c1ac415, before the
 * store was split into one module per table) with a row in every table. A deployed gateway's file must
 * keep opening, with its state intact, whatever the store's code looks like.
 */
describe('store file format', () => {
  const fixture = (): string => {
    const path = join(mkdtempSync(join(tmpdir(), 'gws-')), 'g.sqlite');
    copyFileSync(new URL('./fixtures/gateway-v2.sqlite', import.meta.url), path);
    return path;
  };
  const schema = (path: string): unknown[] => {
    const raw = new Database(path, { readonly: true });
    try {
      return [
        raw.pragma('user_version', { simple: true }),
        raw.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all(),
      ];
    } finally {
      raw.close();
    }
  };

  it('creates the same schema, table for table, as the version-2 file on disk migrated forward', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gws-')), 'g.sqlite');
    openGatewayStore(path).close();
    const old = fixture();
    openGatewayStore(old).close();
    expect(schema(path)).toEqual(schema(old));
    expect(schema(path)[0]).toBe(5);
  });

  it('opens a database written by an earlier gateway with its state intact', () => {
    const path = fixture();
    // Housekeeping forgets command routes older than a day; the fixture's is as old as the fixture.
    const raw = new Database(path);
    raw.prepare('UPDATE command_routes SET created_at = ?').run(Date.now());
    raw.close();

    const s = openGatewayStore(path);
    expect(s.channel.streamId).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.channel.readPeer()).toEqual({ streamId: 'peer-stream', lastSeen: 12 });
    expect(s.channel.pendingAfter(0).map((p) => p.seq)).toEqual([1]);
    expect(s.channel.append(frame(9))).toBe(2);
    expect(s.nextUpdateOffset()).toBe(42);
    expect(s.unhandledUpdates()).toEqual([{ updateId: 41, payload: { update_id: 41 } }]);
    expect(s.getInbound('tg:7:5')).toMatchObject({
      route: { chatId: 7, threadId: 3 },
      state: 'sent',
      seq: 1,
      placeholderId: 6,
      placeholderKind: 'reply',
    });
    expect(s.queuedInbound().map((r) => r.inboundId)).toEqual(['tg:7:8']);
    expect(s.inboxLength()).toBe(2);
    expect(s.inboundMessageIds(7)).toEqual(new Set([5, 8]));
    expect(s.unfinishedTurns()).toMatchObject([
      {
        turnId: 't1',
        route: { chatId: 7, threadId: 3 },
        state: 'running',
        request: 'hi',
        blocks: [{ id: 'b1', text: 'hello' }],
        messageIds: [6, 9],
        cardMessageId: 10,
      },
    ]);
    expect(s.listPins()).toEqual([{ chatId: 7, messageId: 10, turnId: 't1', pinnedAt: 1 }]);
    expect(s.getPromptByRequest('req-1')).toEqual({
      token: 'add8d08217eb46e2',
      requestId: 'req-1',
      kind: 'question',
      route: { chatId: 7 },
      messageId: 11,
      payload: { q: 1 },
      selection: { 0: [1] },
      answers: { 'Which?': 'A' },
      state: 'open',
    });
    expect(s.takeCommandRoute('cmd-1')).toEqual({ chatId: 7, threadId: 3 });
    expect(s.pendingSends()).toEqual([
      {
        sendId: 2,
        chatId: 7,
        floor: 12,
        owner: { kind: 'reply', turnId: 't1' },
        text: 'left in flight',
        other: { parse_mode: 'HTML' },
      },
    ]);
    expect(s.getMeta('commands')).toBe('fp');
    expect(s.recordRefusal(99)).toBe(false);
    s.close();
  });
});
