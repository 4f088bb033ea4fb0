/**
 * Per-conversation settings in the gateway's SQLite: what `/settings` changed is kept per conversation
 * (a private chat and each of its topics apart), an unset field takes the agent's default, and it all
 * survives the store being closed and opened again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createConversationSettings } from '../src/io/settings/conversation-settings.js';
import { openGatewayStore } from '../src/store/store.js';

describe('conversation settings', () => {
  it('are kept per conversation, default where unset, and survive reopening the store', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gwcs-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'g.sqlite');
    const defaults = { replies: 'rich', card: true } as const;
    const first = openGatewayStore(path);
    const settings = createConversationSettings(first, defaults);
    const chat = { chatId: 5 };
    const topic = { chatId: 5, threadId: 9 };
    settings.set(chat, { replies: 'classic' });
    settings.set(topic, { card: false });
    expect(settings.get(chat)).toEqual({ replies: 'classic', card: true });
    expect(settings.get(topic)).toEqual({ replies: 'rich', card: false });
    expect(settings.get({ chatId: 6 })).toEqual(defaults);
    first.close();
    const reopened = openGatewayStore(path);
    onTestFinished(() => reopened.close());
    const again = createConversationSettings(reopened, defaults);
    expect(again.stored(chat)).toEqual({ replies: 'classic' });
    expect(again.stored(topic)).toEqual({ card: false });
    expect(again.get(topic)).toEqual({ replies: 'rich', card: false });
    expect(again.stored({ chatId: 6 })).toEqual({});
  });
});
