/**
 * Bursts across chats, end to end (both services as real processes, the real CLI, the Telegram
 * stand-in): three private chats each sending eight messages within about a second, once with the
 * services left alone and once with the bridge killed in the middle of the burst. Afterwards every
 * message shows that it was read (👌) — no 👀 or ✍ left, and no "⏳ will be read", "…" or "queued"
 * message anywhere.
 */
import { callTool, rule, say, type WireUser } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, finalStates, type System, systemPerTest } from './system.js';

const startSystem = systemPerTest();
const ANSWER = 'Noted, and answered in full once every message of the burst was read. '.repeat(4).trim();

/** Texts a marker or placeholder may not keep once the burst has settled. */
const UNSETTLED = [/^…$/, /^⏳/, /^agent restarting/];

/** The bot's messages in a chat that still look unsettled. */
function unsettled(system: System, chatId: number): string[] {
  return botMessages(system.telegram, chatId)
    .map((m) => m.text)
    .filter((text) => UNSETTLED.some((re) => re.test(text)));
}

async function burst(system: System, chats: readonly number[], during?: () => Promise<void>): Promise<void> {
  for (let i = 0; i < 8; i++) {
    for (const chat of chats) system.telegram.sendText(chat, `burst ${chat} message ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 120));
    if (i === 3) await during?.();
  }
}

describe('bursts across chats', () => {
  for (const killBridge of [false, true]) {
    it(`three chats × eight messages in a second${killBridge ? ', the bridge killed mid-burst' : ''}: every message ends 👌`, async () => {
      const users: WireUser[] = [];
      const system = await startSystem({
        // Two tool calls before the answer: each model call after the first can take the messages that
        // arrived meanwhile (steers), so the burst meets turns at every stage.
        rules: [
          rule(
            'burst',
            callTool('Glob', { pattern: '*.md' }, { startDelayMs: 150 }),
            callTool('Glob', { pattern: '*.txt' }, { startDelayMs: 150 }),
            say(ANSWER),
          ),
        ],
        chunkSize: 12,
        chunkDelayMs: 60,
        agent: (telegram) => {
          users.push(telegram.addUser({ firstName: 'Bob' }), telegram.addUser({ firstName: 'Cy' }));
          return { allow: [telegram.defaultUser.id, ...users.map((u) => u.id)] };
        },
      });
      const { telegram } = system;
      const chats = [system.chatId, ...users.map((u) => telegram.privateChat(u).id)];
      system.start('gateway');
      system.start('bridge');
      // Both services up and the bridge connected: one message answered in the first chat.
      telegram.sendText(system.chatId, 'burst warm-up');
      await telegram.waitFor(
        () => botMessages(telegram, system.chatId).some((m) => m.text === ANSWER) || undefined,
        {
          timeoutMs: 60_000,
        },
      );
      await burst(system, chats, async () => {
        if (!killBridge) return;
        await system.kill('bridge');
        await new Promise((resolve) => setTimeout(resolve, 300));
        system.start('bridge');
      });
      await finalStates(system.telegram, chats, 6000);
      for (const chat of chats) {
        const shown = botMessages(telegram, chat).map((m) => m.text.slice(0, 40));
        expect(unsettled(system, chat), `chat ${chat}: ${JSON.stringify(shown)}`).toEqual([]);
        const asked = telegram.messages(chat).filter((m) => m.from === 'user');
        expect(asked.map((m) => m.reactions)).toEqual(asked.map(() => ['👌']));
        expect(
          botMessages(telegram, chat).some((m) => m.text === ANSWER),
          `chat ${chat} answered`,
        ).toBe(true);
      }
    });
  }
});
