/**
 * Polling as an operator sees it, against the sandbox Bot API: `stop()` does not wait out a long poll
 * (an e2e run once took 29 s to stop), a second poller on the token (409 Conflict) is reported clearly
 * and retried with backoff until it goes away, and a stalled poll connection is detected and replaced.
 * No update is confirmed to Telegram before it is durable, through any of these.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Api } from 'grammy';
import { describe, expect, it } from 'vitest';
import { sleep, startWorld, type World, waitUntil } from './harness.js';

const linesOf = (w: World, event: string) => w.logger.lines.filter((l) => l.fields.event === event);
/**
 * The acknowledgements of messages in `chatId` (no bridge here: each waits, 👀): one reaction call per
 * stored message, so a message handled twice would show two.
 */
const acknowledged = (w: World, chatId: number) =>
  w.tg.calls('setMessageReaction').filter((c) => c.chatId === chatId && c.ok);

// Each test waits on its own world's timers, so they run side by side.
describe.concurrent('polling', () => {
  it('stop() aborts the long poll in flight instead of waiting out its 30 s timeout', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({ polling: { timeoutSec: 30 } }, {}, onTestFinished);
    const { tg } = world;
    // Let the gateway settle into a long poll that would otherwise wait 30 s (the call log records a
    // call when it ends, so no poll has finished yet).
    await sleep(500);
    expect(tg.calls('getUpdates')).toHaveLength(0);
    const started = performance.now();
    await world.gateway.stop();
    const stopMs = performance.now() - started;
    expect(stopMs).toBeLessThan(1000);
  });

  it('an update in flight when stop() aborts the poll is neither lost nor handled twice', async ({
    onTestFinished,
  }) => {
    const world = await startWorld({ polling: { timeoutSec: 30 } }, {}, onTestFinished);
    const { tg } = world;
    const chatId = tg.privateChat().id;
    await sleep(500);
    // Sent and stopped in the same tick: the poll's answer may or may not have reached the gateway.
    tg.sendText(chatId, 'racing the stop');
    await world.gateway.stop();
    await world.restart();
    await tg.waitFor(() => acknowledged(world, chatId).length === 1 || undefined, {
      timeoutMs: 8000,
    });
    // A second handling would follow the first at once (the same update polled again after the restart).
    await sleep(800);
    expect(acknowledged(world, chatId)).toHaveLength(1);
    expect(tg.pendingUpdates()).toHaveLength(0);
  });

  it('409 Conflict: reported as another poller, retried with growing backoff, and recovers', async ({
    onTestFinished,
  }) => {
    const world = await startWorld(
      { polling: { timeoutSec: 1, backoff: { initialMs: 100, maxMs: 400 } } },
      {},
      onTestFinished,
    );
    const { tg } = world;
    await waitUntil(() => tg.calls('getUpdates').length >= 1, 5000, 'first poll');
    // Another process polls the same token for ~0.6 s: each of its polls ends ours with 409, and ours ends its.
    const other = new Api(tg.token, { apiRoot: tg.apiRoot });
    const until = Date.now() + 600;
    while (Date.now() < until) await other.getUpdates({ timeout: 0, offset: -1 }).catch(() => {});
    // Injected conflicts on top make the backoff sequence deterministic.
    tg.failNext(
      'getUpdates',
      {
        errorCode: 409,
        description:
          'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      },
      { times: 3 },
    );
    await waitUntil(() => linesOf(world, 'poll_conflict').length >= 4, 8000, 'conflicts logged');
    const conflicts = linesOf(world, 'poll_conflict');
    expect(conflicts[0]?.level).toBe('error');
    expect(conflicts[0]?.msg).toMatch(/another process is polling this bot token/);
    const delays = conflicts.map((l) => l.fields.retryInMs as number);
    // Within one failure streak the wait doubles up to the cap.
    expect(delays.slice(-3)).toEqual(expect.arrayContaining([400]));
    expect(Math.max(...delays)).toBeLessThanOrEqual(400);
    // Recovered: polling is healthy again and a message gets through.
    const chatId = tg.privateChat().id;
    tg.sendText(chatId, 'after the conflict');
    await tg.waitFor(() => acknowledged(world, chatId)[0], { timeoutMs: 8000 });
    await waitUntil(() => world.gateway.status().polling.ok, 3000, 'healthy');
  }, 20_000);

  it('says "polling as @bot" once polling works, and logs the first failure at once when Telegram goes away', async ({
    onTestFinished,
  }) => {
    const world = await startWorld(
      { polling: { timeoutSec: 1, backoff: { initialMs: 200, maxMs: 400 } } },
      {},
      onTestFinished,
    );
    const w = world;
    await waitUntil(() => linesOf(w, 'polling').length === 1, 5000, 'polling announced');
    expect(linesOf(w, 'polling')[0]?.msg).toBe(`polling as @${w.tg.botUser.username}`);
    await w.tg.stop();
    const gone = performance.now();
    // Not after auto-retry's five silent attempts (about 100 s): the first failed poll is the first line.
    await waitUntil(() => linesOf(w, 'poll_failed').length >= 1, 3000, 'first failure logged');
    expect(performance.now() - gone).toBeLessThan(3000);
    expect(linesOf(w, 'poll_failed')[0]).toMatchObject({ level: 'warn', fields: { attempt: 1 } });
    expect(linesOf(w, 'polling')).toHaveLength(1);
  }, 20_000);

  it('a stalled poll connection is aborted after timeout + grace and polling resumes', async ({
    onTestFinished,
  }) => {
    const world = await startWorld(
      {
        polling: { timeoutSec: 1, stallGraceMs: 300, backoff: { initialMs: 50, maxMs: 200 } },
      },
      {},
      onTestFinished,
    );
    const w = world;
    const stall = await stallingProxy(w.tg.apiRoot);
    onTestFinished(async () => {
      // The world polls through the proxy: it stops before the proxy goes (its own close is then a no-op).
      await w.close();
      stall.server.closeAllConnections();
      await new Promise((resolve) => stall.server.close(resolve));
    });
    // The same gateway state, now reaching Telegram through the proxy.
    await w.gateway.stop();
    const { createGateway } = await import('../src/index.js');
    w.gateway = createGateway({ ...w.options, apiRoot: stall.apiRoot });
    await w.gateway.start();

    stall.stalled = true;
    await waitUntil(() => linesOf(w, 'poll_stalled').length >= 1, 6000, 'stall detected');
    expect(w.gateway.status().polling).toMatchObject({ ok: false, error: 'polling stalled' });
    expect(stall.swallowed).toBeGreaterThanOrEqual(1);
    stall.stalled = false;
    const chatId = w.tg.privateChat().id;
    w.tg.sendText(chatId, 'after the stall');
    await w.tg.waitFor(() => acknowledged(w, chatId)[0], { timeoutMs: 8000 });
    expect(w.gateway.status().polling.ok).toBe(true);
  }, 20_000);
});

/**
 * An HTTP proxy to `target` that, while `stalled` is set, accepts `getUpdates` requests and never
 * answers them: the connection stays open and silent, like a dead NAT mapping.
 */
async function stallingProxy(target: string): Promise<{
  server: Server;
  apiRoot: string;
  stalled: boolean;
  swallowed: number;
}> {
  const state = { stalled: false, swallowed: 0 };
  const server = createServer((req, res) => {
    if (state.stalled && req.url?.includes('/getUpdates')) {
      state.swallowed++;
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void fetch(`${target}${req.url}`, {
        method: req.method ?? 'GET',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
      })
        .then(async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, { server, apiRoot });
}
