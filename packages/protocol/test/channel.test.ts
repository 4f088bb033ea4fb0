import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppFrame, FrameOf } from '../src/common/messages/frame.js';
import type { ChannelStore } from '../src/common/store.js';
import { createProtocolClient } from '../src/node/client.js';
import type { Endpoint } from '../src/node/endpoint.js';
import { createMemoryChannelStore } from '../src/node/memory-store.js';
import { createProtocolServer } from '../src/node/server.js';
import { startCuttingProxy, tempSocketDir, waitFor } from './harness.js';

const text = (i: number): FrameOf<'text'> => ({
  type: 'text',
  turnId: 't',
  blockId: `b${i}`,
  text: `chunk ${i}`,
});
const indexOf = (frame: AppFrame) => Number((frame as FrameOf<'text'>).blockId.slice(1));

describe('reliable channel', () => {
  let dir: ReturnType<typeof tempSocketDir>;
  const stops: Array<() => Promise<void>> = [];
  beforeEach(() => {
    dir = tempSocketDir();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    dir.remove();
  });

  function pair(opts: { serverStore?: ChannelStore; clientStore?: ChannelStore; via?: string } = {}) {
    const fromClient: AppFrame[] = [];
    const fromServer: AppFrame[] = [];
    const serverStore = opts.serverStore ?? createMemoryChannelStore();
    const clientStore = opts.clientStore ?? createMemoryChannelStore();
    const server = createProtocolServer({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: serverStore,
      onFrame: (frame) => void fromClient.push(frame),
    });
    const client = createProtocolClient({
      socketPath: opts.via ?? dir.path('gw.sock'),
      agent: 'demo',
      store: clientStore,
      onFrame: (frame) => void fromServer.push(frame),
      backoff: { initialMs: 2, maxMs: 20 },
    });
    stops.push(
      () => server.stop(),
      () => client.stop(),
    );
    return { server, client, fromClient, fromServer, serverStore, clientStore };
  }

  it('delivers frames both ways after the handshake', async () => {
    const { server, client, fromClient, fromServer } = pair();
    await server.start();
    await client.start();
    await waitFor(() => client.connected && server.connected, 5_000, 'handshake');
    await client.send(text(1));
    await server.send({ type: 'interrupt', commandId: 'c1', route: { chatId: 42 } });
    await waitFor(() => fromClient.length === 1 && fromServer.length === 1);
    expect(fromClient[0]).toMatchObject({ type: 'text', seq: 1, blockId: 'b1' });
    expect(fromServer[0]).toMatchObject({ type: 'interrupt', seq: 1, commandId: 'c1' });
  });

  it('keeps frames sent while disconnected and delivers them once the peer is back', async () => {
    const { server, client, fromClient, clientStore } = pair();
    await client.start();
    for (let i = 1; i <= 3; i++) await client.send(text(i));
    await client.send({ type: 'text_delta', turnId: 't', blockId: 'b', delta: 'lost on purpose' });
    expect(clientStore.pendingAfter(0)).toHaveLength(3);
    await server.start();
    await waitFor(() => fromClient.length === 3, 5_000, 'resend');
    expect(fromClient.map(indexOf)).toEqual([1, 2, 3]);
    await waitFor(() => clientStore.pendingAfter(0).length === 0, 5_000, 'acks');
  });

  it('delivers 10,000 frames each way exactly once and in order while the connection is cut at random', async () => {
    const proxyPath = dir.path('proxy.sock');
    const { server, client, fromClient, fromServer } = pair({ via: proxyPath });
    await server.start();
    const proxy = await startCuttingProxy(proxyPath, dir.path('gw.sock'));
    stops.push(() => proxy.close());
    await client.start();
    const total = 10_000;
    let cuts = 0;
    const cutter = setInterval(() => {
      if (Math.random() < 0.5) cuts += proxy.cutAll();
    }, 7);
    try {
      const sender = async (endpoint: Endpoint) => {
        for (let i = 1; i <= total; i++) {
          await endpoint.send(text(i));
          if (i % 500 === 0) await new Promise((resolve) => setTimeout(resolve, 3));
        }
      };
      await Promise.all([sender(client), sender(server)]);
      await waitFor(() => fromClient.length >= total && fromServer.length >= total, 60_000, 'all frames');
    } finally {
      clearInterval(cutter);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const expected = Array.from({ length: total }, (_, i) => i + 1);
    expect(fromClient.map(indexOf)).toEqual(expected);
    expect(fromServer.map(indexOf)).toEqual(expected);
    expect(cuts).toBeGreaterThanOrEqual(3);
  }, 90_000);

  it('starts a fresh duplicate filter when the peer comes back with a new stream (its state was wiped)', async () => {
    const serverStore = createMemoryChannelStore();
    const first = pair({ serverStore });
    await first.server.start();
    await first.client.start();
    for (let i = 1; i <= 5; i++) await first.client.send(text(i));
    await waitFor(() => first.fromClient.length === 5);
    await first.client.stop();
    // A bridge whose state directory was deleted: a new store numbering from 1 again.
    const fromClient = first.fromClient;
    const client2 = createProtocolClient({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: () => {},
      backoff: { initialMs: 2, maxMs: 20 },
    });
    stops.push(() => client2.stop());
    await client2.start();
    await client2.send(text(6));
    await waitFor(() => fromClient.length === 6, 5_000, 'frame from the new stream');
    expect(fromClient[5]).toMatchObject({ seq: 1, blockId: 'b6' });
  });

  it('retries a frame whose handler failed once, and delivers it in order', async () => {
    let failures = 1;
    const seen: number[] = [];
    const server = createProtocolServer({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: (frame) => {
        if (failures > 0) {
          failures--;
          throw new Error('disk full');
        }
        seen.push(indexOf(frame));
      },
    });
    const client = createProtocolClient({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: () => {},
      backoff: { initialMs: 2, maxMs: 20 },
    });
    stops.push(
      () => server.stop(),
      () => client.stop(),
    );
    await server.start();
    await client.start();
    await client.send(text(1));
    await client.send(text(2));
    await waitFor(() => seen.length === 2, 5_000, 'redelivery');
    expect(seen).toEqual([1, 2]);
  });

  it('makes a sender that outpaces the socket wait for it to drain', async () => {
    let reading = false;
    const received: AppFrame[] = [];
    const server = createProtocolServer({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: async (frame) => {
        // A slow consumer: the receiver stops reading the socket once its queue is long.
        while (!reading) await new Promise((resolve) => setTimeout(resolve, 10));
        received.push(frame);
      },
    });
    const client = createProtocolClient({
      socketPath: dir.path('gw.sock'),
      agent: 'demo',
      store: createMemoryChannelStore(),
      onFrame: () => {},
    });
    stops.push(
      () => server.stop(),
      () => client.stop(),
    );
    await server.start();
    await client.start();
    await waitFor(() => client.connected);
    const big = 'x'.repeat(100_000);
    let sent = 0;
    const sending = (async () => {
      for (let i = 0; i < 400; i++) {
        await client.send({ type: 'text', turnId: 't', blockId: `b${i}`, text: big });
        sent++;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sent).toBeLessThan(400);
    reading = true;
    await sending;
    await waitFor(() => received.length === 400, 20_000, 'all big frames');
  });
});

describe('Endpoint.send', () => {
  it('appends a reliable frame to the store synchronously, inside the call', () => {
    const store = createMemoryChannelStore();
    const client = createProtocolClient({
      socketPath: '/nonexistent/sock',
      agent: 'demo',
      store,
      onFrame: () => {},
    });
    void client.send({ type: 'interrupt', commandId: 'c1', route: { chatId: 42 } });
    // No await: the gateway relies on this to queue an answer in the same SQLite transaction as its state.
    expect(store.pendingAfter(0)).toEqual([
      { seq: 1, frame: { type: 'interrupt', commandId: 'c1', route: { chatId: 42 } } },
    ]);
  });
});
