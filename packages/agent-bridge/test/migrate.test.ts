/**
 * State written by the single-session bridge (protocol 1) becomes the conversation of the chat it served.
 * The fixture is that version's layout: `bridge.json` (its snapshot shape), `stdout.log`, `stderr.log` and
 * an `outbox.log` in its plain-JSON format with source tags that name no conversation.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conversationKey, silentLogger } from '@switchyard/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { conversationDir, FileChannelStore } from '../src/index.js';
import { migrateSingleSession } from '../src/migrate.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** A state directory as the single-session bridge left it. */
function legacyState(lastRoute: { chatId: number; threadId?: number } | undefined): string {
  root = mkdtempSync(join(tmpdir(), 'sy-migrate-'));
  const dir = join(root, 'bridge');
  mkdirSync(dir);
  const snapshot = {
    version: 1,
    // A pid that is not running: the process is gone, its record stays until a bridge reads its end.
    child: { pid: 2 ** 22 + 123, startTime: '1', startedAt: 0 },
    stdoutOffset: 120,
    session: {
      generation: 3,
      turnCounter: 9,
      controlCounter: 2,
      sessionId: 'sess-legacy',
      initSeen: true,
      compacting: false,
      exited: false,
      ...(lastRoute ? { lastRoute } : {}),
      awaiting: [],
      prompts: {},
      controls: {},
      agents: {},
    },
    delivered: ['in:tg:42:7'],
    exits: [],
    history: [{ role: 'user', text: 'hello', at: 1 }],
  };
  writeFileSync(join(dir, 'bridge.json'), JSON.stringify(snapshot));
  writeFileSync(join(dir, 'stdout.log'), '{"type":"system"}\n');
  writeFileSync(join(dir, 'stderr.log'), '');
  const outbox = [
    { stream: 'stream-legacy' },
    { n: 5 },
    { a: 5, f: { type: 'status', state: 'idle' }, src: [3, 120, 0] },
    { a: 6, f: { type: 'message_taken', turnId: 'g3-t9', inboundIds: ['tg:42:7'] }, in: 'in:tg:42:7#1' },
  ];
  writeFileSync(join(dir, 'outbox.log'), `${outbox.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return dir;
}

const placement = (stateDir: string) => ({
  keyOf: conversationKey,
  dirOf: (key: string) => join(stateDir, 'conversations', conversationDir(key)),
});

describe('migration from the single-session bridge', () => {
  it("moves the session into its chat's conversation, with the outbox's tags", async () => {
    const stateDir = legacyState({ chatId: 42 });
    const store = new FileChannelStore(join(stateDir, 'outbox.log'));
    const key = await migrateSingleSession(stateDir, store, placement(stateDir), silentLogger);
    expect(key).toBe('42');
    const dir = placement(stateDir).dirOf('42');
    for (const name of ['bridge.json', 'stdout.log', 'stderr.log']) {
      expect(existsSync(join(dir, name))).toBe(true);
      expect(existsSync(join(stateDir, name))).toBe(false);
    }
    const moved = JSON.parse(readFileSync(join(dir, 'bridge.json'), 'utf8'));
    expect(moved.session.sessionId).toBe('sess-legacy');
    expect(moved.stdoutOffset).toBe(120);
    // The tags now belong to the conversation, durably: a reopened store says the same.
    expect(store.lastSource('42')).toEqual([3, 120, 0]);
    expect(store.lastInbound('42')).toBe('in:tg:42:7#1');
    expect(store.lastSource('')).toBeUndefined();
    store.close();
    const reopened = new FileChannelStore(join(stateDir, 'outbox.log'));
    expect(reopened.lastSource('42')).toEqual([3, 120, 0]);
    expect(reopened.streamId).toBe('stream-legacy');
    expect(reopened.pendingAfter(0).map((p) => p.seq)).toEqual([5, 6]);
    reopened.close();
    // A second start finds nothing left to migrate.
    const again = new FileChannelStore(join(stateDir, 'outbox.log'));
    expect(await migrateSingleSession(stateDir, again, placement(stateDir), silentLogger)).toBeUndefined();
    again.close();
  });

  it('a forum topic session goes to that topic', async () => {
    const stateDir = legacyState({ chatId: -1001, threadId: 22 });
    const store = new FileChannelStore(join(stateDir, 'outbox.log'));
    expect(await migrateSingleSession(stateDir, store, placement(stateDir), silentLogger)).toBe('-1001:22');
    expect(existsSync(join(stateDir, 'conversations', 'c-1001_t22', 'bridge.json'))).toBe(true);
    store.close();
  });

  it('a session that never served a chat is removed (its dead process has nothing to keep)', async () => {
    const stateDir = legacyState(undefined);
    const store = new FileChannelStore(join(stateDir, 'outbox.log'));
    expect(await migrateSingleSession(stateDir, store, placement(stateDir), silentLogger)).toBeUndefined();
    expect(existsSync(join(stateDir, 'bridge.json'))).toBe(false);
    expect(existsSync(join(stateDir, 'stdout.log'))).toBe(false);
    store.close();
  });
});
