// The gateway's memory stays bounded: 10,000 messages through 50 conversations, the heap (after a full
// collection) after the last against after the first 1,000 (goal: within 10%). Every message is
// answered by a fake bridge as a turn of its own (turn_started, its text, turn_ended), so each one goes
// through the whole path — durable row, acknowledgement, reply, final render, markers — and every
// per-message entry the gateway keeps in memory would show here.
//   npx tsc -b && node --expose-gc packages/gateway/bench/heap.bench.mjs
// The gateway runs in a child process of its own (bench/bot-process.mjs), so the stand-in Telegram's own
// record of every message (kept here) does not count.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryChannelStore, createProtocolClient } from '@switchyard/protocol';
import { createTelegramServer } from '../../sandbox/dist/index.js';
import { benchGatewayOptions, startBot } from './bench-bot.mjs';

const CHATS = 50;
const TOTAL = Number(process.env.BENCH_MESSAGES ?? 10_000);
const FIRST = TOTAL / 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const tg = createTelegramServer({ rateLimits: false });
await tg.start();
const dir = mkdtempSync(join(tmpdir(), 'gwheap-'));
const users = Array.from({ length: CHATS }, (_, i) => tg.addUser({ id: 8000 + i, firstName: `h${i}` }));
const chats = users.map((u) => tg.privateChat(u).id);
const options = benchGatewayOptions(
  tg,
  dir,
  users.map((u) => u.id),
  {
    // No pacing: this measures memory, not Telegram's limits (the stand-in's are off too).
    budget: { scale: 0.000_001, globalPerSecond: 1_000_000 },
    card: { showDelayMs: 600_000 },
  },
);
const gateway = await startBot('gateway', options, { execArgv: ['--expose-gc'] });
const ask = gateway.ask;

let answered = 0;
let turn = 0;
const bridge = createProtocolClient({
  socketPath: options.socketPath,
  agent: 'bench',
  store: createMemoryChannelStore(),
  onFrame(frame) {
    if (frame.type !== 'user_message') return;
    const turnId = `t${turn++}`;
    const text = `Answer to ${frame.text}`;
    void (async () => {
      await bridge.send({
        type: 'turn_started',
        turnId,
        route: frame.route,
        inboundIds: [frame.inboundId],
        request: frame.text,
        startedAt: Date.now(),
      });
      await bridge.send({ type: 'text_delta', turnId, blockId: 'b', delta: text });
      await bridge.send({ type: 'text', turnId, blockId: 'b', text });
      await bridge.send({ type: 'turn_ended', turnId, outcome: 'success' });
    })();
  },
});
await bridge.start();
// Counted from the stand-in's events: re-reading every chat at every event would make this O(n²).
let replies = 0;
let wake = () => {};
tg.subscribe((event) => {
  if (event.type === 'message' && event.message.from === 'bot') {
    replies++;
    wake();
  }
});
const repliesReach = (n) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${replies} of ${n} answers`)), 60_000);
    wake = () => {
      if (replies < n) return;
      clearTimeout(timer);
      resolve();
    };
    wake();
  });

let heapFirst = 0;
const started = Date.now();
for (let sent = 0; sent < TOTAL; ) {
  for (const [i, chat] of chats.entries()) tg.sendText(chat, `m${sent + i}`, { from: users[i] });
  sent += CHATS;
  await repliesReach(sent);
  answered = sent;
  if (process.env.BENCH_TRACE) console.log(sent, Date.now() - started);
  if (sent === FIRST) {
    await sleep(500);
    heapFirst = await ask('heap');
  }
}
await sleep(1000);
const heapLast = await ask('heap');
const ratio = heapLast / heapFirst;
console.log(
  JSON.stringify(
    {
      messages: answered,
      conversations: CHATS,
      seconds: +((Date.now() - started) / 1000).toFixed(1),
      heapAfterFirstMB: +(heapFirst / 1e6).toFixed(1),
      heapAfterLastMB: +(heapLast / 1e6).toFixed(1),
      ratio: +ratio.toFixed(3),
      goal: '≤ 1.10',
      met: ratio <= 1.1,
    },
    null,
    2,
  ),
);
await bridge.stop();
await gateway.stop();
await tg.stop();
rmSync(dir, { recursive: true, force: true });
