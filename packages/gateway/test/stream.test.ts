/**
 * A streamed reply end to end through the sandbox Bot API: the live text continues in a new message
 * past 4096 characters while it streams, the final messages are identical to the model's text as
 * defined in `core/reply/reply-text.ts` (same visible text up to whitespace at cuts, same formatting), and
 * when Telegram rejects the HTML the same text arrives unformatted.
 */
import { describe, expect, it } from 'vitest';
import {
  connectBridge,
  type FakeBridge,
  sleep,
  startTurn,
  startWorld,
  type World,
  waitUntil,
} from './harness.js';
import { type Formatted, parsedHtml, renderedWhole, replyDifference } from './reply-text.js';

/** ~8.6k characters of Markdown with what splits badly: code fences, escapes, links, lists, emoji. */
function longReply(): string {
  const parts: string[] = [];
  for (let i = 0; i < 12; i++) {
    parts.push(`## Part ${i}`);
    parts.push(
      `Some **bold ${i}** and _italic_ text with a < b && c > d, a [link](https://e.com/${i}) 😀. `.repeat(4),
    );
    parts.push(`\`\`\`ts\n${`const v${i} = a < b && c > d; // ${'x'.repeat(20)}\n`.repeat(6)}\`\`\``);
    parts.push(`- item ${i} one\n- item ${i} \`two\`\n- item ${i} three`);
  }
  return parts.join('\n\n');
}

/** The turn's reply messages (every bot message in the chat: no card is shown at the harness delay). */
const replyMessages = (w: World, chatId: number): Formatted[] =>
  w.tg
    .messages(chatId)
    .filter((m) => m.from === 'bot' && m.kind === 'text')
    .map((m) => ({ text: m.text, entities: m.entities }));

async function streamTurn(
  b: FakeBridge,
  chatId: number,
  inboundId: string,
  text: string,
  onChunk?: (i: number) => Promise<void>,
) {
  await startTurn(b, { turnId: 't1', route: { chatId }, request: 'write a lot', inboundIds: [inboundId] });
  const step = Math.ceil(text.length / 8);
  for (let i = 0; i * step < text.length; i++) {
    await b.send({
      type: 'text_delta',
      turnId: 't1',
      blockId: 'b1',
      delta: text.slice(i * step, (i + 1) * step),
    });
    await onChunk?.(i);
    // Time for a live edit between two chunks: the harness's budget (scaled by ten) grants one in ~100 ms.
    await sleep(200);
  }
  await b.send({ type: 'text', turnId: 't1', blockId: 'b1', text });
}

async function userMessage(w: World, b: FakeBridge): Promise<{ chatId: number; inboundId: string }> {
  const chatId = w.tg.privateChat().id;
  w.tg.sendText(chatId, 'write a lot');
  const frame = await waitUntil(() => b.received.find((f) => f.type === 'user_message'));
  return { chatId, inboundId: frame.type === 'user_message' ? frame.inboundId : '' };
}

describe.concurrent('a long streamed reply', () => {
  it('continues live past 4096 characters, and ends identical to the model text over several messages', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const { chatId, inboundId } = await userMessage(world, bridge);
    const text = longReply();
    expect(text.length).toBeGreaterThan(8000);
    let liveMessages = 0;
    await streamTurn(bridge, chatId, inboundId, text, async () => {
      liveMessages = Math.max(liveMessages, replyMessages(world, chatId).length);
    });
    // While streaming (before turn_ended), the live text already spilled into a second message.
    await waitUntil(() => replyMessages(world, chatId).length >= 2, 5000, 'live continuation');
    const live = tg.messages(chatId).filter((m) => m.from === 'bot');
    // The first message was filled (cuts prefer a blank line in the second half of the limit) before the next
    // began.
    expect(live[0]?.history.some((v) => v.text.length > 2048)).toBe(true);
    expect(live.every((m) => m.text.length <= 4096)).toBe(true);

    await bridge.send({ type: 'turn_ended', turnId: 't1', outcome: 'success' });
    const reference = renderedWhole(text);
    await waitUntil(
      () => replyDifference(reference, replyMessages(world, chatId)) === undefined,
      20_000,
      'final reply identical to the model text',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${replyDifference(reference, replyMessages(world, chatId))}`);
    });
    // It stays so (no late live edit overwrites a final chunk), and nothing else was left behind.
    await sleep(1500);
    const final = replyMessages(world, chatId);
    expect(replyDifference(reference, final)).toBeUndefined();
    expect(final.length).toBeGreaterThanOrEqual(3);
    expect(
      tg
        .messages(chatId)
        .filter((m) => m.from === 'bot')
        .map((m) => m.kind),
    ).toEqual(final.map(() => 'text'));
    // Code stayed code in every message that holds some of it.
    for (const m of final.filter((f) => f.text.includes('const v')))
      expect(m.entities.some((e) => e.type === 'pre')).toBe(true);
    expect(tg.stats().tooManyRequests).toBe(0);
  }, 40_000);

  it('falls back to the same text unformatted when Telegram rejects the HTML', async ({ onTestFinished }) => {
    const world = await startWorld({}, {}, onTestFinished);
    const bridge = await connectBridge(world.socketPath, 'test', { finished: onTestFinished });
    const { tg } = world;
    const { chatId, inboundId } = await userMessage(world, bridge);
    const text = 'Hello **there** & <you>.\n\n```\ncode < here\n```';
    await streamTurn(bridge, chatId, inboundId, text);
    // The final render's first HTML edit is refused as Telegram refuses malformed HTML.
    tg.failNext('editMessageText', {
      description: 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0',
    });
    await bridge.send({ type: 'turn_ended', turnId: 't1', outcome: 'success' });
    await waitUntil(
      () => world.logger.lines.find((l) => l.fields.event === 'stream_html_rejected'),
      8000,
      'HTML rejected',
    );
    const reference = renderedWhole(text);
    const plain = (fs: Formatted[]) => fs.map((f) => ({ text: f.text, entities: [] }));
    await waitUntil(
      () =>
        replyDifference({ text: reference.text, entities: [] }, plain(replyMessages(world, chatId))) ===
        undefined,
      8000,
      'plain fallback identical',
    );
    const [message] = tg.messages(chatId).filter((m) => m.from === 'bot');
    expect(message?.text).toBe('Hello there & <you>.\n\ncode < here');
    expect(message?.entities).toEqual([]);
  });
});

describe.concurrent('the identity check itself', () => {
  it('notices a dropped, doubled or unformatted piece', () => {
    const reference = parsedHtml('<b>ab</b> cd ef');
    const b = [{ type: 'bold', offset: 0, length: 2 }];
    expect(
      replyDifference(reference, [
        { text: 'ab', entities: b },
        { text: 'cd ef', entities: [] },
      ]),
    ).toBeUndefined();
    expect(
      replyDifference(reference, [
        { text: 'ab', entities: b },
        { text: 'ef', entities: [] },
      ]),
    ).toMatch(/continue/);
    expect(
      replyDifference(reference, [
        { text: 'ab cd', entities: b },
        { text: 'cd ef', entities: [] },
      ]),
    ).toMatch(/continue/);
    expect(
      replyDifference(reference, [
        { text: 'ab cd', entities: [] },
        { text: 'ef', entities: [] },
      ]),
    ).toMatch(/formatting/);
    expect(replyDifference(reference, [{ text: 'ab', entities: b }])).toMatch(/missing/);
  });
});
