// One bot for the benchmark, in a process of its own so that its latency and resident memory are its
// own (the sandbox and the bench live in the parent). argv[2] is `echo` (a bare grammY echo bot, the
// baseline) or `gateway` (options as JSON in BENCH_OPTIONS). Answers `{ rss: true }` on IPC with its
// RSS, `{ heap: true }` with its heap after a full collection, and stops on `{ stop: true }`.
import { Bot } from 'grammy';
import { createGateway } from '../dist/index.js';

const kind = process.argv[2];
let stop;
if (kind === 'echo') {
  const options = JSON.parse(process.env.BENCH_OPTIONS ?? '{}');
  const bot = new Bot(options.token, { client: { apiRoot: options.apiRoot } });
  bot.on('message:text', (ctx) => ctx.reply(ctx.message.text));
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
