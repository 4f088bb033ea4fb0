// Rich replies against classic ones, in the same run, against the sandbox Bot API (real HTTP on
// 127.0.0.1) with a fake bridge on the protocol socket. Build first:
//   npx tsc -b packages/gateway packages/sandbox && node packages/gateway/bench/replies.bench.mjs
// For each of `classic` and `rich`: (a) time from the model's first token (the first `text_delta` leaving
// the fake bridge, 300 ms after the turn started) to the first visible words in a private chat (a
// placeholder edit or a draft holding them), median of 7 fresh chats; (b) a 20,000-character Markdown answer (a table, headings, prose)
// streamed at 100 tokens/s (400 characters a second): messages the answer ends as, Bot API calls for it,
// and 429s. Flags: --quick streams the answer 4x faster (for a smoke run).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryChannelStore, createProtocolClient } from '@switchyard/protocol';
import { createTelegramServer } from '../../sandbox/dist/index.js';
import { createGateway } from '../dist/index.js';
import { benchGatewayOptions } from './bench-bot.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const clock = () => performance.timeOrigin + performance.now();
const quick = process.argv.includes('--quick');
const SAMPLES = 7;

/** A 20,000-character answer in Markdown. */
function answer() {
  const rows = Array.from({ length: 60 }, (_, i) => `| item ${i} | ${i * 7} | ok |`).join('\n');
  const table = `| item | value | state |\n|:--|--:|:-:|\n${rows}`;
  const para = (i) =>
    `Paragraph ${i} explains one more thing in some detail, ${'and then it goes on. '.repeat(8)}`;
  let text = `# Results\n\n${table}\n\n## Discussion\n\n`;
  for (let i = 0; text.length < 20_000; i++) text += `${para(i)}\n\n`;
  return text.slice(0, 20_000);
}

async function run(replies, tg, base) {
  const dir = mkdtempSync(join(tmpdir(), `gwr-${replies}-`));
  const users = Array.from({ length: SAMPLES + 1 }, (_, i) => tg.addUser({ id: base + i, firstName: 'u' }));
  const gateway = createGateway(
    benchGatewayOptions(
      tg,
      dir,
      users.map((u) => u.id),
      { card: { showDelayMs: 600_000 }, replies },
    ),
  );
  await gateway.start();
  const inbound = [];
  const bridge = createProtocolClient({
    socketPath: join(dir, 'b.sock'),
    agent: 'bench',
    store: createMemoryChannelStore(),
    onFrame(frame) {
      if (frame.type === 'user_message') inbound.push(frame);
    },
  });
  await bridge.start();
  await sleep(300);

  // (a) first token → first visible words
  const samples = [];
  for (let i = 0; i < SAMPLES; i++) {
    const user = users[i];
    const chatId = tg.privateChat(user).id;
    const before = inbound.length;
    tg.sendText(chatId, 'hello', { from: user });
    await tg.waitFor(() => inbound.length > before, { timeoutMs: 10_000 });
    const frame = inbound[inbound.length - 1];
    const turnId = `lat-${i}`;
    await bridge.send({
      type: 'turn_started',
      turnId,
      route: { chatId },
      inboundIds: [frame.inboundId],
      request: 'hello',
      startedAt: Date.now(),
    });
    // The first token comes 300 ms after the turn starts (the placeholder or "Thinking…" is out by
    // then), as with a fast model; the chat's budget is what it is at that moment.
    await sleep(300);
    let seenAt = 0;
    const off = tg.subscribe((event) => {
      if (seenAt) return;
      if (event.type === 'draft' && event.draft.chatId === chatId && event.draft.text.includes('Hello'))
        seenAt = event.draft.at;
      if (
        (event.type === 'edit' || event.type === 'message') &&
        event.message.chatId === chatId &&
        event.message.from === 'bot' &&
        event.message.text.includes('Hello')
      )
        seenAt = event.message.history.at(-1).at;
    });
    const t0 = clock();
    await bridge.send({ type: 'text_delta', turnId, blockId: 'b', delta: 'Hello there' });
    await tg.waitFor(() => seenAt > 0, { timeoutMs: 10_000 });
    off();
    samples.push(seenAt - t0);
    await bridge.send({ type: 'text', turnId, blockId: 'b', text: 'Hello there' });
    await bridge.send({ type: 'turn_ended', turnId, outcome: 'success' });
    await sleep(2500); // the final render is out and the next chat starts rested
  }

  // (b) a 20,000-character answer at 100 tokens/s
  const user = users[SAMPLES];
  const chatId = tg.privateChat(user).id;
  const text = answer();
  const before = inbound.length;
  tg.sendText(chatId, 'the results', { from: user });
  await tg.waitFor(() => inbound.length > before, { timeoutMs: 10_000 });
  const frame = inbound[inbound.length - 1];
  await bridge.send({
    type: 'turn_started',
    turnId: 'long',
    route: { chatId },
    inboundIds: [frame.inboundId],
    request: 'x',
    startedAt: Date.now(),
  });
  const step = 40; // 10 tokens of ~4 characters
  for (let i = 0; i < text.length; i += step) {
    await bridge.send({ type: 'text_delta', turnId: 'long', blockId: 'b', delta: text.slice(i, i + step) });
    await sleep(quick ? 25 : 100);
  }
  await bridge.send({ type: 'text', turnId: 'long', blockId: 'b', text });
  await bridge.send({ type: 'turn_ended', turnId: 'long', outcome: 'success' });
  await sleep(8000);
  const calls = tg.calls().filter((c) => c.chatId === chatId && c.method !== 'sendChatAction');
  const byMethod = {};
  for (const c of calls) byMethod[c.method] = (byMethod[c.method] ?? 0) + 1;
  const messages = tg.messages(chatId).filter((m) => m.from === 'bot' && m.kind === 'text');
  const result = {
    firstWordsMs: +median(samples).toFixed(1),
    firstWordsSamplesMs: samples.map((s) => Math.round(s)),
    answer: {
      characters: text.length,
      messages: messages.length,
      rich: messages.filter((m) => m.rich).length,
      botApiCalls: calls.length,
      byMethod,
      tooManyRequests: calls.filter((c) => c.errorCode === 429).length,
    },
  };
  await bridge.stop();
  await gateway.stop();
  return result;
}

const tg = createTelegramServer({ webView: false });
await tg.start();
const classic = await run('classic', tg, 500_000);
const rich = await run('rich', tg, 600_000);
console.log(
  JSON.stringify(
    {
      streamedAt: quick ? '400 tokens/s (--quick)' : '100 tokens/s',
      classic,
      rich,
      tooManyRequestsTotal: tg.stats().tooManyRequests,
    },
    null,
    2,
  ),
);
await tg.stop();
process.exit(0);
