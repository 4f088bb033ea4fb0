/**
 * One conversation's failure is its own (gateway and bridge as real processes, the real CLI): a
 * conversation whose setup fails — its file tools' endpoint cannot be set up, because a directory stands
 * where its `mcp.json` is written (what an unbindable tool socket was before the tools moved to HTTP) —
 * is told so in its own chat and tried again with backoff, while another conversation of the same bridge
 * keeps answering and the bridge process stays up. Once the obstacle is gone, the failed conversation's
 * kept message is answered.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CONVERSATIONS_DIR, conversationDir } from '@switchyard/agent-bridge';
import { conversationKey } from '@switchyard/protocol';
import { rule, say, type WireUser } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, systemPerTest } from './system.js';

const startSystem = systemPerTest();

describe('a failing conversation', () => {
  it('its file tools cannot be set up: an error in its own chat, the other chat keeps answering, the bridge stays up', async () => {
    let bob: WireUser | undefined;
    const system = await startSystem({
      rules: [rule('tell amber', say('Amber, answered.')), rule('tell basalt', say('Basalt, answered.'))],
      agent: (telegram) => {
        bob = telegram.addUser({ firstName: 'Bob' });
        return { allow: [telegram.defaultUser.id, bob.id] };
      },
    });
    const { telegram } = system;
    const ann = system.chatId;
    const bobChat = telegram.privateChat(bob).id;
    // A directory (not empty) where Bob's conversation writes its mcp.json: setting it up fails.
    const blockedPath = path.join(
      path.join(
        system.dir,
        'state/bridge',
        CONVERSATIONS_DIR,
        conversationDir(conversationKey({ chatId: bobChat })),
      ),
      'mcp.json',
    );
    mkdirSync(blockedPath, { recursive: true });
    writeFileSync(path.join(blockedPath, 'in-the-way'), '');
    system.start('gateway');
    system.start('bridge');
    const bridgePid = system.pid('bridge');

    telegram.sendText(bobChat, 'tell basalt');
    const texts = (chatId: number): string[] => botMessages(telegram, chatId).map((m) => m.text);
    await telegram.waitFor(() => texts(bobChat).some((t) => t.startsWith('⚠️')) || undefined, {
      timeoutMs: 60_000,
    });
    expect(texts(bobChat).find((t) => t.startsWith('⚠️'))).toMatch(/could not be opened/);

    // The other conversation of the same bridge answers meanwhile, twice.
    telegram.sendText(ann, 'tell amber');
    await telegram.waitFor(() => texts(ann).includes('Amber, answered.') || undefined, { timeoutMs: 60_000 });
    telegram.sendText(ann, 'tell amber');
    await telegram.waitFor(
      () => texts(ann).filter((t) => t === 'Amber, answered.').length === 2 || undefined,
      {
        timeoutMs: 60_000,
      },
    );
    expect(texts(ann).some((t) => t.startsWith('⚠️'))).toBe(false);
    // The bridge process never exited: the same pid, alive, and no exit in the harness's log.
    expect(system.pid('bridge')).toBe(bridgePid);
    expect(() => process.kill(bridgePid as number, 0)).not.toThrow();
    expect(system.logs()).not.toContain('"harness":"exit","service":"bridge"');
    // One report, however many retries.
    expect(texts(bobChat).filter((t) => t.startsWith('⚠️'))).toHaveLength(1);

    // The obstacle removed: the retry (with backoff, at most 30 s apart) opens it, and the kept message
    // is answered in its own chat.
    rmSync(blockedPath, { recursive: true, force: true });
    await telegram.waitFor(() => texts(bobChat).includes('Basalt, answered.') || undefined, {
      timeoutMs: 90_000,
    });
    expect(texts(ann)).not.toContain('Basalt, answered.');
  }, 200_000);

  it('a conversation that cannot be adopted after a bridge restart: the bridge stays up and serves the others', async () => {
    let bob: WireUser | undefined;
    const system = await startSystem({
      rules: [rule('tell amber', say('Amber, answered.')), rule('tell basalt', say('Basalt, answered.'))],
      agent: (telegram) => {
        bob = telegram.addUser({ firstName: 'Bob' });
        return { allow: [telegram.defaultUser.id, bob.id] };
      },
    });
    const { telegram } = system;
    const ann = system.chatId;
    const bobChat = telegram.privateChat(bob).id;
    const texts = (chatId: number): string[] => botMessages(telegram, chatId).map((m) => m.text);
    const count = (chatId: number, text: string): number => texts(chatId).filter((t) => t === text).length;
    system.start('gateway');
    system.start('bridge');
    telegram.sendText(bobChat, 'tell basalt');
    await telegram.waitFor(() => count(bobChat, 'Basalt, answered.') === 1 || undefined, {
      timeoutMs: 60_000,
    });

    // The bridge dies with Bob's process recorded; a directory takes the place of its mcp.json.
    await system.kill('bridge');
    const blockedPath = path.join(
      path.join(
        system.dir,
        'state/bridge',
        CONVERSATIONS_DIR,
        conversationDir(conversationKey({ chatId: bobChat })),
      ),
      'mcp.json',
    );
    rmSync(blockedPath, { force: true });
    mkdirSync(blockedPath);
    writeFileSync(path.join(blockedPath, 'in-the-way'), '');
    const exitsBefore = system.logs().split('"harness":"exit","service":"bridge"').length;
    system.start('bridge');
    const bridgePid = system.pid('bridge');

    await telegram.waitFor(() => texts(bobChat).some((t) => t.startsWith('⚠️')) || undefined, {
      timeoutMs: 60_000,
    });
    telegram.sendText(ann, 'tell amber');
    await telegram.waitFor(() => count(ann, 'Amber, answered.') === 1 || undefined, { timeoutMs: 60_000 });
    expect(() => process.kill(bridgePid as number, 0)).not.toThrow();
    expect(system.logs().split('"harness":"exit","service":"bridge"').length).toBe(exitsBefore);

    // Once it can be opened, the recorded process is adopted and Bob is answered again.
    rmSync(blockedPath, { recursive: true, force: true });
    telegram.sendText(bobChat, 'tell basalt');
    await telegram.waitFor(() => count(bobChat, 'Basalt, answered.') === 2 || undefined, {
      timeoutMs: 90_000,
    });
  }, 240_000);
});
