/**
 * A message whose handler throws because the database cannot be written (a full disk, played here by a
 * SQLite trigger that fails the inbox insert with SQLite's own "database or disk is full"): the gateway
 * keeps running, tells the user it is still trying, and delivers the message once the write succeeds.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { HANDLER_TROUBLE } from '../src/io/intake/telegram-handlers.js';
import { connectBridge, startWorld, waitUntil } from './harness.js';

describe('a handler that throws on a full disk', () => {
  it('retries with backoff, tells the user, and delivers the message once there is room', async () => {
    const w = await startWorld();
    const b = await connectBridge(w.socketPath, 'test');
    const chatId = w.tg.privateChat().id;
    const db = new Database(join(w.stateDir, 'gateway.sqlite'));
    db.exec(`CREATE TRIGGER disk_full BEFORE INSERT ON inbound
               BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
    w.tg.sendText(chatId, 'hello while the disk is full');
    await w.tg.waitFor(
      () => w.tg.messages(chatId).find((m) => m.from === 'bot' && m.text === HANDLER_TROUBLE),
      {
        timeoutMs: 10_000,
      },
    );
    expect(b.received.filter((f) => f.type === 'user_message')).toHaveLength(0);
    db.exec('DROP TRIGGER disk_full');
    db.close();
    const delivered = await waitUntil(() => b.received.find((f) => f.type === 'user_message'), 15_000);
    expect(delivered.type === 'user_message' && delivered.text).toBe('hello while the disk is full');
  });
});
