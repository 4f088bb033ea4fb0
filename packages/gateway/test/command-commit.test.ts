/**
 * A command for the bridge and its update's "handled" mark are one transaction with its route row and
 * its frame in the channel's outbox: a crash (here, the outbox append failing like a full disk) leaves
 * either all of them or none — never a handled update whose command was not queued (lost), nor a queued
 * command whose update is replayed at the next boot (run twice).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GatewayToBridge, silentLogger } from '@switchyard/protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createCommandRunner } from '../src/io/commands/commands.js';
import { openGatewayStore } from '../src/store/store.js';

function rig(failAppend: boolean) {
  const store = openGatewayStore(join(mkdtempSync(join(tmpdir(), 'gwc-')), 'g.sqlite'));
  onTestFinished(() => store.close());
  store.recordUpdates([{ updateId: 41, payload: { update_id: 41 } }]);
  const sent: GatewayToBridge[] = [];
  const runner = createCommandRunner({
    agent: 'demo',
    models: [],
    reply: () => {},
    replyWithButtons: () => {},
    // As the channel does: a reliable frame is appended synchronously inside `send`.
    send: (frame) => {
      if (failAppend) throw new Error('database or disk is full');
      store.channel.append(frame);
      sent.push(frame);
      return Promise.resolve();
    },
    connected: () => true,
    status: () => {
      throw new Error('not asked');
    },
    listPins: () => [],
    routes: {
      add: (id, route) => store.addCommandRoute(id, route),
      take: (id) => store.takeCommandRoute(id),
    },
    atomically: (fn) => store.atomically(fn),
    logger: silentLogger,
  });
  const commit = () => store.markHandled(41);
  return { store, runner, sent, commit };
}

describe('a command and its handled mark', () => {
  it('are kept together: handled, routed and queued in one transaction', async () => {
    const { store, runner, sent, commit } = rig(false);
    await runner.run({ name: 'compact' }, { chatId: 7 }, 1, commit);
    expect(store.isHandled(41)).toBe(true);
    expect(sent).toHaveLength(1);
    const commandId = (sent[0] as { commandId: string }).commandId;
    expect(store.channel.pendingAfter(0).map((p) => p.frame)).toEqual(sent);
    expect(store.takeCommandRoute(commandId)).toEqual({ chatId: 7 });
  });

  it('are lost together: a failed queueing leaves the update unhandled (replayed) and no route', async () => {
    const { store, runner, commit } = rig(true);
    await expect(runner.run({ name: 'compact' }, { chatId: 7 }, 1, commit)).rejects.toThrow(/disk is full/);
    expect(store.isHandled(41)).toBe(false);
    expect(store.channel.pendingAfter(0)).toEqual([]);
    expect(store.unhandledUpdates().map((u) => u.updateId)).toEqual([41]);
  });

  it('a command with nothing durable leaves the mark to the caller', async () => {
    const { store, runner, commit } = rig(false);
    await runner.run({ name: 'help' }, { chatId: 7 }, 1, commit);
    expect(store.isHandled(41)).toBe(false);
  });
});
