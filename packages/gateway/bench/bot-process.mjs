// One bot for the benchmark, in a process of its own so that its latency and resident memory are its
// own (the sandbox and the bench live in the parent). argv[2] is `echo` (a bare grammY echo bot, the
// baseline), `floor` (the quiet-chat bench's floor: only the answers) or `gateway` (options as JSON in
// BENCH_OPTIONS). Answers `{ rss: true }` on IPC with its
// RSS, `{ heap: true }` with its heap after a full collection, and stops on `{ stop: true }`.
import { Bot } from 'grammy';
import { GATEWAY_WINDOWS, windowDelay } from '../dist/core/telegram/pace-windows.js';
import { createGateway } from '../dist/index.js';

const kind = process.argv[2];
let stop;
if (kind === 'echo') {
  const options = JSON.parse(process.env.BENCH_OPTIONS ?? '{}');
  const bot = new Bot(options.token, { client: { apiRoot: options.apiRoot } });
  bot.on('message:text', (ctx) => ctx.reply(ctx.message.text));
  void bot.start({ timeout: 1 });
  stop = () => bot.stop();
} else if (kind === 'floor') {
  // The floor of the quiet-chat bench: the bench's scripted model run here, sending only the answers.
  const options = JSON.parse(process.env.BENCH_OPTIONS ?? '{}');
  const bot = new Bot(options.token, { client: { apiRoot: options.apiRoot } });
  const pause = (ms) => new Promise((r) => setTimeout(r, ms));
  const lanes = new Map();
  /** Per chat, the times of its sends: paced by the gateway's own windows, the same limits. */
  const sent = new Map();
  const paced = async (chatId) => {
    const windows = chatId < 0 ? GATEWAY_WINDOWS.group : GATEWAY_WINDOWS.private;
    for (;;) {
      const wait = windowDelay(sent.get(chatId) ?? [], windows, Date.now());
      if (wait === 0) break;
      await pause(wait);
    }
    sent.set(chatId, [...(sent.get(chatId) ?? []), Date.now()]);
  };
  const run = async (chatId, lane) => {
    while (lane.waiting.length > 0) {
      const opener = lane.waiting.splice(0)[0];
      await pause(options.stepMs);
      lane.waiting.splice(0); // read at the turn's next step, as steers
      await pause(options.stepMs);
      process.send?.({ answeredAt: Date.now(), idle: false });
      await paced(chatId);
      await bot.api.sendMessage(chatId, 'Answer.', {
        reply_parameters: { message_id: opener, allow_sending_without_reply: true },
      });
    }
    lanes.delete(chatId);
    process.send?.({ idle: lanes.size === 0 });
  };
  bot.on('message:text', (ctx) => {
    const chatId = ctx.chat.id;
    const lane = lanes.get(chatId);
    if (lane) return void lane.waiting.push(ctx.message.message_id);
    const fresh = { waiting: [ctx.message.message_id] };
    lanes.set(chatId, fresh);
    process.send?.({ idle: false });
    void run(chatId, fresh);
  });
  void bot.start({ timeout: 1 });
  stop = () => bot.stop();
} else {
  const gateway = createGateway(JSON.parse(process.env.BENCH_OPTIONS ?? '{}'));
  await gateway.start();
  stop = () => gateway.stop();
}
process.on('message', async (message) => {
  if (message.rss) process.send?.({ rss: process.memoryUsage().rss });
  if (message.heap) {
    // Run with --expose-gc (bench/run.js passes it on): the heap that survives a full collection.
    globalThis.gc?.();
    process.send?.({ heap: process.memoryUsage().heapUsed });
  }
  if (message.stop) {
    await stop();
    process.exit(0);
  }
});
process.send?.({ ready: true });
