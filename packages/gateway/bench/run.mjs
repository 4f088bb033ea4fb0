// Gateway benchmark against the sandbox Bot API (real HTTP on 127.0.0.1). Build first:
//   npx tsc -b packages/gateway packages/sandbox && node packages/gateway/bench/run.mjs
// (a) update → acknowledgement latency vs a bare grammY echo bot, (b) a 3,000-token answer streamed at
// 100 tokens/s: edits, highest edit rate per chat, 429s, final text identical, (c) resident memory.
// Each bot runs in a child process of its own (bench/bot-process.mjs); the sandbox and the fake bridge
// stay here. Flags: --latency-only stops after (a).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryChannelStore, createProtocolClient } from '@switchyard/protocol';
// The sandbox is a sibling workspace package the gateway does not depend on; import its build by path.
import { createTelegramServer } from '../../sandbox/dist/index.js';
import { benchGatewayOptions, startBot } from './bench-bot.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const N = 50;

/**
 * Median time from the sandbox handing an update out (its `updates_delivered` event, when the
 * `getUpdates` answer is written) to the bot's acknowledgement reaching the server, both on the
 * sandbox's clock: the echo bot's reply message, or the gateway's 👀 reaction on the message (its
 * acknowledgement of a message that waits: `busy` opens a turn in the chat first, so the gateway's own
 * path is timed, not a round trip through the bridge). One update at a time, each from a new private
 * chat, so no chat budget is involved.
 */
async function latency(tg, firstUserId, busy) {
  const samples = [];
  let deliveredAt = 0;
  let repliedAt = 0;
  const clock = () => performance.timeOrigin + performance.now();
  const off = tg.subscribe((event) => {
    if (event.type === 'updates_delivered') deliveredAt = event.at;
    if (!busy && event.type === 'message' && event.message.from === 'bot') repliedAt = event.message.date;
    if (busy && event.type === 'reaction' && repliedAt === 0) repliedAt = clock();
  });
  for (let i = 0; i < N; i++) {
    const user = tg.addUser({ id: firstUserId + i, firstName: 'u' });
    const chatId = tg.privateChat(user).id;
    await busy?.open(chatId, i);
    repliedAt = 0;
    tg.sendText(chatId, `ping ${i}`, { from: user });
    await tg.waitFor(() => repliedAt > 0, { timeoutMs: 10_000 });
    samples.push(repliedAt - deliveredAt);
    await busy?.close(i);
    await sleep(20);
  }
  off();
  return median(samples);
}

const tg = createTelegramServer();
await tg.start();
// Bare echo bot
const echo = await startBot('echo', { token: tg.token, apiRoot: tg.apiRoot });
await sleep(300);
const echoMs = await latency(tg, 900_000);
await echo.stop();

const dir = mkdtempSync(join(tmpdir(), 'gwb-'));
const gw = await startBot(
  'gateway',
  benchGatewayOptions(
    tg,
    dir,
    [
      tg.defaultUser.id,
      ...Array.from({ length: N }, (_, i) => 7000 + i),
      ...Array.from({ length: 4 }, (_, i) => 7100 + i),
    ],
    // What (b) measures is a message and its edits; rich replies (the default) show
    // a private chat's answer as drafts and one message, which the reply-text and files benches cover.
    { replies: 'classic' },
  ),
);
const bridge = createProtocolClient({
  socketPath: join(dir, 'b.sock'),
  agent: 'bench',
  store: createMemoryChannelStore(),
  onFrame() {},
});
await bridge.start();
await sleep(300);
const rssIdle = await gw.rss();
const gwMs = await latency(tg, 7000, {
  async open(chatId, i) {
    await bridge.send({
      type: 'turn_started',
      turnId: `l${i}`,
      route: { chatId },
      inboundIds: [],
      request: 'x',
      startedAt: Date.now(),
    });
    await sleep(30);
  },
  close: (i) => bridge.send({ type: 'turn_ended', turnId: `l${i}`, outcome: 'success' }),
});
if (process.argv.includes('--latency-only')) {
  console.log(
    JSON.stringify({
      echoBot: +echoMs.toFixed(2),
      gateway: +gwMs.toFixed(2),
      ratio: +(gwMs / echoMs).toFixed(2),
    }),
  );
  await bridge.stop();
  await gw.stop();
  await tg.stop();
  process.exit(0);
}

// (b) streaming
const chatId = tg.privateChat().id;
tg.resetStats();
const words = Array.from({ length: 3000 }, (_, i) => `w${i}`);
const full = words.join(' ');
await bridge.send({
  type: 'turn_started',
  turnId: 's',
  route: { chatId },
  inboundIds: [],
  request: 'x',
  startedAt: Date.now(),
});
let rssPeak = 0;
for (let i = 0; i < words.length; i += 10) {
  await bridge.send({
    type: 'text_delta',
    turnId: 's',
    blockId: 'b',
    delta: (i ? ' ' : '') + words.slice(i, i + 10).join(' '),
  });
  if (i % 100 === 0) rssPeak = Math.max(rssPeak, await gw.rss());
  await sleep(100);
}
await bridge.send({ type: 'text', turnId: 's', blockId: 'b', text: full });
await bridge.send({ type: 'turn_ended', turnId: 's', outcome: 'success' });
await sleep(8000);
const edits = tg.calls('editMessageText').filter((c) => c.chatId === chatId);
const tooMany1 = tg.stats().tooManyRequests;

// (c) four conversations streaming at once (four private chats, each its own turn), for the gateway's
// memory with 4 live sessions against 1 above.
const chats = Array.from(
  { length: 4 },
  (_, i) => tg.privateChat(tg.addUser({ id: 7100 + i, firstName: `bench${i}` })).id,
);
for (const [i, id] of chats.entries()) {
  await bridge.send({
    type: 'turn_started',
    turnId: `p${i}`,
    route: { chatId: id },
    inboundIds: [],
    request: 'x',
    startedAt: Date.now(),
  });
}
let rssPeak4 = 0;
for (let i = 0; i < words.length; i += 10) {
  for (const [c] of chats.entries()) {
    await bridge.send({
      type: 'text_delta',
      turnId: `p${c}`,
      blockId: 'b',
      delta: (i ? ' ' : '') + words.slice(i, i + 10).join(' '),
    });
  }
  if (i % 100 === 0) rssPeak4 = Math.max(rssPeak4, await gw.rss());
  await sleep(100);
}
for (const [c] of chats.entries()) {
  await bridge.send({ type: 'text', turnId: `p${c}`, blockId: 'b', text: full });
  await bridge.send({ type: 'turn_ended', turnId: `p${c}`, outcome: 'success' });
}
await sleep(8000);
const tooMany4 = tg.stats().tooManyRequests;
let maxRate = 0;
for (const e of edits)
  maxRate = Math.max(maxRate, edits.filter((x) => x.at >= e.at && x.at < e.at + 1000).length);
// The reply's messages only. The 30 s stream outlasts the card's show delay, so the chat also holds the
// progress card (sent silently) and its pin notice (a service message); counting those as reply text
// was why this check used to report false. For this text (words and single spaces) "identical" is
// exact: every cut falls on a space, which Telegram strips, so the messages joined with one space must
// equal the model's text character for character (the tests check Markdown replies entity by entity).
const finalText = tg
  .messages(chatId)
  .filter((m) => m.from === 'bot' && m.kind === 'text' && !m.silent)
  .map((m) => m.text)
  .join(' ');
console.log(
  JSON.stringify(
    {
      acknowledgementMs: {
        echoBot: +echoMs.toFixed(2),
        gateway: +gwMs.toFixed(2),
        ratio: +(gwMs / echoMs).toFixed(2),
      },
      stream: {
        edits: edits.length,
        sends: tg.calls('sendMessage').filter((c) => c.chatId === chatId).length,
        maxEditsPerSecond: maxRate,
        tooManyRequests: tooMany1,
        tooManyRequestsWithFourChats: tooMany4 - tooMany1,
        finalIdentical: finalText === full,
      },
      rssMB: {
        idle: +(rssIdle / 2 ** 20).toFixed(1),
        streaming: +(rssPeak / 2 ** 20).toFixed(1),
        streamingFourAtOnce: +(rssPeak4 / 2 ** 20).toFixed(1),
        note: 'the gateway process alone (sandbox and bench run in the parent)',
      },
    },
    null,
    2,
  ),
);
await bridge.stop();
await gw.stop();
await tg.stop();
process.exit(0);
