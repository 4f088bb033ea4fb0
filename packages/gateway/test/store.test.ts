import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameOf } from '@switchyard/protocol';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkGatewayStore, inspectGatewayStore } from '../src/store/inspect.js';
import { SCHEMA_VERSION } from '../src/store/schema.js';
import { openGatewayStore } from '../src/store/store.js';

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
 * One schema, no migrations (`store/schema.ts`): no release exists, so a file another build wrote is
 * refused rather than carried forward.
 */
describe('store file format', () => {
  const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'gws-')), 'g.sqlite');
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

  it('writes the one schema into a new file at the current version, and reopens it unchanged with its state', () => {
    const path = fresh();
    const s = openGatewayStore(path);
    s.recordUpdates([{ updateId: 41, payload: { update_id: 41 } }]);
    s.close();
    const written = schema(path);
    expect(written[0]).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(4);
    const again = openGatewayStore(path);
    expect(again.unhandledUpdates()).toEqual([{ updateId: 41, payload: { update_id: 41 } }]);
    again.close();
    expect(schema(path)).toEqual(written);
  });

  // 1: a file an earlier build wrote, before the automation, settings and spend tables; 2: before the
  // spend table kept the turn's opening message.
  it.each([1, 2, 5])(
    'refuses a file at schema version %i, saying to delete the state directory, and leaves it as it was',
    (version) => {
      const path = fresh();
      const raw = new Database(path);
      raw.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
      raw.pragma(`user_version = ${version}`);
      raw.close();
      const before = schema(path);
      expect(() => openGatewayStore(path)).toThrow(
        new RegExp(
          `schema version ${version}, this gateway writes only version ${SCHEMA_VERSION}.*delete its state directory`,
        ),
      );
      expect(schema(path)).toEqual(before);
      expect(checkGatewayStore(path)).toMatchObject({
        ok: false,
        problem: expect.stringMatching(/delete the state directory/),
      });
    },
  );
});
