/**
 * A `kill -9` between two of `turn_started`'s writes, played in process: a SQLite trigger makes the
 * second write fail and the gateway is stopped, which leaves the database as the kill would.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/index.js';
import { connectBridge, sleep, startTurn, startWorld, waitUntil } from './harness.js';
import { botReply, renderedWhole, replyDifference, waitForReply } from './reply-text.js';

describe('a crash inside the bookkeeping of turn_started', () => {
  // The kill lands between two of the frame's writes: the turn is recorded, its opening message not yet
  // taken. A trigger makes the second write fail (the frame is not acknowledged, nothing after it runs)
  // and the gateway is then stopped, which leaves the database as a `kill -9` at that instant would.
  // The restarted gateway must still render the reply whole, once, with nothing stray beside it.
  it('leaves nothing behind: the turn and the messages it takes are one write', async () => {
    const w = await startWorld();
    const b = await connectBridge(w.socketPath, 'test');
    const chatId = w.tg.privateChat().id;
    w.tg.sendText(chatId, 'hello');
    const first = await waitUntil(() => b.received.find((f) => f.type === 'user_message'), 5000);
    if (first.type !== 'user_message') throw new Error('unreachable');
    // The message is stored and handed over; its turn has not started (no reaction yet, no placeholder).
    await sleep(100);
    expect(w.tg.messages(chatId).filter((m) => m.from === 'bot')).toEqual([]);

    const db = new Database(join(w.stateDir, 'gateway.sqlite'));
    db.exec(`CREATE TRIGGER die_here BEFORE UPDATE OF state ON inbound WHEN NEW.state = 'taken'
             BEGIN SELECT RAISE(ABORT, 'killed between the writes of turn_started'); END`);
    await startTurn(b, { turnId: 't', route: { chatId }, request: 'hello', inboundIds: [first.inboundId] });
    await b.send({ type: 'text', turnId: 't', blockId: 'b1', text: 'The **answer**.' });
    await b.send({ type: 'turn_ended', turnId: 't', outcome: 'success' });
    await sleep(300);
    await w.gateway.stop();
    db.exec('DROP TRIGGER die_here');
    db.close();

    w.gateway = createGateway(w.options);
    await w.gateway.start();
    const reference = renderedWhole('The **answer**.');
    await waitForReply(w.tg, chatId, reference, 10_000);
    await sleep(300);
    expect(replyDifference(reference, botReply(w.tg, chatId))).toBeUndefined();
  });
});
