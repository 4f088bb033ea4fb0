/**
 * A quiet, fast chat, end to end (both services as real processes, the real CLI, the Telegram
 * stand-in at its default limits): the rhythm people really type in — several short messages in a row
 * — in a group and in three private chats at once. A message's state is a reaction on it (👀 ✍ 👌),
 * never a message of its own, so the chat's message slots go to answers: every answer is visible
 * within seconds of the model giving it, the bot adds no message beyond its answers, answers keep turn
 * order, no "…" or "⏳" is ever shown, and Telegram never answers 429.
 */
import { callTool, rule, say, type TelegramServer, type WireUser } from '@switchyard/sandbox';
import { describe, expect, it } from 'vitest';
import { botMessages, finalStates, type System, systemPerTest } from './system.js';

const BOT = '@switchyard_sandbox_bot';
const ANSWER = 'Answered at once, in one message that the chat shows as soon as it is ready.';

/** Records when the model received each Messages request (the stand-in keeps no times). */
function watchModel(system: System): { times: number[]; stop(): void } {
  const times: number[] = [];
  const timer = setInterval(() => {
    const n = system.model.messageRequests().length;
    while (times.length < n) times.push(Date.now());
  }, 10);
  return { times, stop: () => clearInterval(timer) };
}

/** The last moment anything visible changed in `chatId`: a message sent or edited, a reaction set. */
function lastChange(telegram: TelegramServer, chatId: number): number {
  const calls = telegram
    .calls()
    .filter((c) => c.chatId === chatId && c.ok && CHAT_CALLS.has(c.method))
    .map((c) => c.at + c.durationMs);
  return Math.max(0, ...calls);
}

/** The Bot API calls that change what a chat shows (drafts and chat actions are not messages). */
const CHAT_CALLS = new Set(['sendMessage', 'sendRichMessage', 'editMessageText', 'setMessageReaction']);

/** Texts no version of any bot message may ever have shown. */
const NEVER = [/^…$/, /^⏳/, /read together/, /^agent restarting/];

async function bridgeConnected(system: System): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!/"event":"bridge_connection","connected":true/.test(system.logs())) {
    if (Date.now() > deadline) throw new Error('the bridge never connected');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('end to end: a quiet, fast chat', () => {
  const startSystem = systemPerTest();

  it('a group, four messages to the bot 300 ms apart: every answer within 5 s of the model’s last, no extra message', async () => {
    const system = await startSystem({ rules: [rule('quick', say(ANSWER))], chunkSize: 40, chunkDelayMs: 5 });
    const { telegram } = system;
    const group = telegram.createGroup({ title: 'team', supergroup: true });
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    const model = watchModel(system);
    for (let i = 0; i < 4; i++) {
      telegram.sendText(group.id, `${BOT} quick question ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await finalStates(telegram, [group.id], 4000);
    model.stop();
    const answers = botMessages(telegram, group.id);
    const turns = model.times.length;
    const lastAnswer = Math.max(...model.times);
    const visible = Math.max(...answers.map((m) => m.history.at(-1)?.at ?? m.date));
    const calls = telegram.calls().filter((c) => c.chatId === group.id && CHAT_CALLS.has(c.method));
    console.log(
      `group: ${turns} turns, ${answers.length} bot messages, ${calls.length} chat calls ` +
        `(${calls.filter((c) => c.method === 'setMessageReaction').length} reactions), ` +
        `last answer visible ${((visible - lastAnswer) / 1000).toFixed(2)} s after the model's last, ` +
        `settled ${((lastChange(telegram, group.id) - lastAnswer) / 1000).toFixed(2)} s after it`,
    );
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.length).toBeLessThanOrEqual(turns);
    for (const m of answers) expect(m.text.trim()).toBe(ANSWER);
    expect(visible - lastAnswer).toBeLessThanOrEqual(5000);
    for (const m of answers)
      for (const v of m.history) for (const re of NEVER) expect(v.text).not.toMatch(re);
    // Every message to the bot ends read: 👌 on each.
    const asked = telegram.messages(group.id).filter((m) => m.from === 'user');
    expect(asked.map((m) => m.reactions)).toEqual(asked.map(() => ['👌']));
    expect(telegram.stats().tooManyRequests).toBe(0);
  }, 120_000);

  it('three private chats × eight messages in about a second: every final state within 8 s of the model reading the last one', async () => {
    const users: WireUser[] = [];
    const system = await startSystem({
      // A tool call before the answer: the model call after it takes the messages that came meanwhile
      // (steers), so the burst meets turns at every stage.
      rules: [rule('burst', callTool('Glob', { pattern: '*.md' }, { startDelayMs: 100 }), say(ANSWER))],
      chunkSize: 40,
      chunkDelayMs: 5,
      agent: (telegram) => {
        users.push(telegram.addUser({ firstName: 'Bob' }), telegram.addUser({ firstName: 'Cy' }));
        return { allow: [telegram.defaultUser.id, ...users.map((u) => u.id)] };
      },
    });
    const { telegram } = system;
    const chats = [system.chatId, ...users.map((u) => telegram.privateChat(u).id)];
    system.start('gateway');
    system.start('bridge');
    await bridgeConnected(system);
    const model = watchModel(system);
    for (let i = 0; i < 8; i++) {
      for (const chat of chats) telegram.sendText(chat, `burst message ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 125));
    }
    await finalStates(telegram, chats, 4000);
    model.stop();
    const lastRead = Math.max(...model.times);
    for (const chat of chats) {
      const bot = botMessages(telegram, chat);
      const asked = telegram.messages(chat).filter((m) => m.from === 'user');
      const calls = telegram.calls().filter((c) => c.chatId === chat && CHAT_CALLS.has(c.method));
      const settle = (lastChange(telegram, chat) - lastRead) / 1000;
      console.log(
        `private ${chat}: ${asked.length} messages, ${bot.length} answers, ${calls.length} chat calls ` +
          `(${calls.filter((c) => c.method === 'setMessageReaction').length} reactions), ` +
          `settled ${settle.toFixed(2)} s after the model read the last`,
      );
      expect(bot.length).toBeGreaterThan(0);
      for (const m of bot) expect(m.text.trim()).toBe(ANSWER);
      for (const m of bot) for (const v of m.history) for (const re of NEVER) expect(v.text).not.toMatch(re);
      // Every message's final state: read (👌); the answers reply to the messages that opened their turns.
      expect(asked.map((m) => m.reactions)).toEqual(asked.map(() => ['👌']));
      expect(settle).toBeLessThanOrEqual(8);
      // Answers in turn order: each answer replies to a later message than the answer before it.
      const openers = bot.map((m) => m.replyToMessageId ?? 0);
      expect(openers).toEqual([...openers].sort((a, b) => a - b));
    }
    expect(telegram.stats().tooManyRequests).toBe(0);
  }, 120_000);
});
