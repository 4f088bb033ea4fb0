/**
 * A state directory deep enough that a socket built naively under it (a conversation's, say, at
 * `<stateDir>/bridge/conversations/c<key>/tools.sock`) would be ~150 bytes: over the 107 a Unix socket
 * path may have, so the kernel would bind a cut name. Every socket must be placed where it fits (the file
 * tools need none now: the bridge serves them over HTTP), the bridge must come back after `kill -9`, and
 * the agent's files must still reach the chat each conversation belongs to, also from the Claude process
 * that outlived the bridge and whose MCP client keeps the endpoint it was started with.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { conversationDir } from '@switchyard/agent-bridge';
import { conversationKey } from '@switchyard/protocol';
import { rule, say, sendFile } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

/** Relative to the config file, so the harness removes it with the rest of the system's directory. */
const DEEP_STATE = `${'a-checkout-nested-deep/'.repeat(4)}state`;

describe('end to end: a deep state directory', () => {
  const startSystem = systemPerTest();

  it('keeps every socket path short, survives a bridge kill -9, and files reach the right chat', async () => {
    let groupId = 0;
    const system = await startSystem({
      rules: [
        rule('first report', sendFile('first.txt', 'First'), say('Sent the first.')),
        rule('second report', sendFile('second.txt', 'Second'), say('Sent the second.')),
        rule('private report', sendFile('private.txt', 'Private'), say('Sent the private one.')),
      ],
      agent: (telegram) => {
        groupId = telegram.createGroup({ title: 'Team' }).id;
        // The group's sends are not what this test is about: no prompt before them.
        return { stateDir: DEEP_STATE, chats: [{ chat: groupId, confirmFileSends: false }] };
      },
    });
    const { telegram, chatId, dir } = system;
    for (const name of ['first', 'second', 'private']) {
      writeFileSync(path.join(dir, 'work', `${name}.txt`), `${name} ${Math.random()}\n`);
    }
    const group = { id: groupId };
    const naive = path.join(
      dir,
      DEEP_STATE,
      'bridge',
      'conversations',
      conversationDir(conversationKey({ chatId: group.id })),
      'tools.sock',
    );
    expect(Buffer.byteLength(naive)).toBeGreaterThanOrEqual(140);

    system.start('gateway');
    system.start('bridge');
    telegram.sendText(group.id, '@switchyard_sandbox_bot first report please');
    await telegram.waitFor(() => botMessages(telegram, group.id).find((m) => m.text === 'Sent the first.'), {
      timeoutMs: 90_000,
    });
    // The naive path was never bound (nor a cut version of it beside it).
    expect(existsSync(naive)).toBe(false);

    await system.kill('bridge', 'SIGKILL');
    system.start('bridge');
    // The group's Claude outlived the bridge: its MCP server calls the new bridge on the old path.
    telegram.sendText(group.id, '@switchyard_sandbox_bot second report please');
    await telegram.waitFor(() => botMessages(telegram, group.id).find((m) => m.text === 'Sent the second.'), {
      timeoutMs: 90_000,
    });
    telegram.sendText(chatId, 'private report please');
    await telegram.waitFor(
      () => botMessages(telegram, chatId).find((m) => m.text === 'Sent the private one.'),
      { timeoutMs: 90_000 },
    );

    const documents = (id: number) =>
      botMessages(telegram, id)
        .filter((m) => m.kind === 'document')
        .map((m) => m.file?.fileName);
    expect(documents(group.id)).toEqual(['first.txt', 'second.txt']);
    expect(documents(chatId)).toEqual(['private.txt']);
    // The bridge that came back did not exit on the dead one's socket.
    expect(system.logs()).not.toMatch(/EADDRINUSE/);
  });
});
